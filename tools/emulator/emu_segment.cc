// Creating, attaching to and charging the run's shared segment (see emu_segment.h).
#include "emu_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace stagio::emu {
namespace {

enum SegmentInitState : uint32_t { kUninitialized = 0, kInitializing = 1, kReady = 2 };

// "STEM" plus a layout version: bump the last byte when EmuSegment changes.
constexpr uint32_t kSegmentMagic = 0x5354454d ^ 2u;  // 2: the link stage

// How long a process waits for another to finish initializing before it gives up: far longer
// than the few stores initialization takes, short enough that a crashed initializer is noticed.
constexpr int64_t kInitWaitLimitNs = 10 * 1000000000LL;

int64_t MonotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

SegmentOpenResult Failure(const char* step, int error) {
  SegmentOpenResult result;
  result.failed_step = step;
  result.error = error;
  return result;
}

int InitializeSegment(EmuSegment* segment, const DeviceParams& params) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  const int rc = pthread_mutex_init(&segment->lock, &attributes);
  pthread_mutexattr_destroy(&attributes);
  if (rc != 0) return rc;
  segment->params = params;
  segment->device = MakeDeviceState(params);
  segment->counters = EmuCounters{};
  segment->magic = kSegmentMagic;
  __atomic_store_n(&segment->init_state, kReady, __ATOMIC_RELEASE);
  return 0;
}

bool WaitUntilReady(EmuSegment* segment) {
  const int64_t give_up = MonotonicNs() + kInitWaitLimitNs;
  while (__atomic_load_n(&segment->init_state, __ATOMIC_ACQUIRE) != kReady) {
    if (MonotonicNs() > give_up) return false;
    const timespec pause = {0, 100000};
    nanosleep(&pause, nullptr);
  }
  return true;
}

// False only when the mutex is unrecoverable (a previous owner died and nobody repaired it).
bool Lock(EmuSegment* segment) {
  const int rc = pthread_mutex_lock(&segment->lock);
  if (rc == EOWNERDEAD) {
    pthread_mutex_consistent(&segment->lock);
    return true;
  }
  return rc == 0;
}

}  // namespace

SegmentOpenResult OpenSegment(const char* name, SegmentMode mode,
                              const DeviceParams& params_if_created) {
  int flags = O_RDWR | O_CLOEXEC;
  if (mode == SegmentMode::kCreateNew) flags |= O_CREAT | O_EXCL;
  if (mode == SegmentMode::kCreateOrAttach) flags |= O_CREAT;
  const int fd = shm_open(name, flags, 0600);
  if (fd < 0) return Failure("shm_open", errno);

  struct stat info;
  if (fstat(fd, &info) != 0) {
    const int error = errno;
    close(fd);
    return Failure("fstat", error);
  }
  // Empty means just created, here or by a racing process; both setting the same size is fine.
  if (info.st_size == 0 && ftruncate(fd, sizeof(EmuSegment)) != 0) {
    const int error = errno;
    close(fd);
    return Failure("ftruncate", error);
  }
  if (info.st_size != 0 && info.st_size != static_cast<off_t>(sizeof(EmuSegment))) {
    close(fd);
    return Failure("checking the size (a segment of another stagio-emu version?)", EINVAL);
  }
  void* mapped = mmap(nullptr, sizeof(EmuSegment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_error = errno;
  close(fd);
  if (mapped == MAP_FAILED) return Failure("mmap", map_error);
  auto* segment = static_cast<EmuSegment*>(mapped);

  SegmentOpenResult result;
  uint32_t expected = kUninitialized;
  if (mode != SegmentMode::kAttachExisting &&
      __atomic_compare_exchange_n(&segment->init_state, &expected, kInitializing, false,
                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    if (const int rc = InitializeSegment(segment, params_if_created); rc != 0) {
      CloseSegment(segment);
      return Failure("pthread_mutex_init", rc);
    }
    result.created = true;
  } else if (!WaitUntilReady(segment)) {
    CloseSegment(segment);
    return Failure("waiting for another process to initialize it", ETIMEDOUT);
  }
  if (segment->magic != kSegmentMagic) {
    CloseSegment(segment);
    return Failure("checking the layout (a segment of another stagio-emu version?)", EINVAL);
  }
  result.segment = segment;
  return result;
}

void CloseSegment(EmuSegment* segment) { munmap(segment, sizeof(EmuSegment)); }

int UnlinkSegment(const char* name) { return shm_unlink(name); }

int64_t ChargeSegment(EmuSegment* segment, RequestKind kind, int64_t now_ns, uint64_t bytes) {
  if (!Lock(segment)) return now_ns;  // cannot happen in practice: charge nothing, stay alive
  // Reads bring their data back over the link; writes and syncs send theirs (if any) out.
  const LinkDirection direction =
      kind == RequestKind::kRead ? LinkDirection::kDataBack : LinkDirection::kDataOut;
  const int64_t finish = ChargeLinkedRequest(&segment->device, now_ns, bytes, direction);
  EmuCounters& counters = segment->counters;
  counters.requests += 1;
  switch (kind) {
    case RequestKind::kRead:
      counters.read_requests += 1;
      counters.bytes_read += bytes;
      break;
    case RequestKind::kWrite:
      counters.write_requests += 1;
      counters.bytes_written += bytes;
      break;
    case RequestKind::kSync: counters.sync_requests += 1; break;
  }
  counters.charged_ns += static_cast<uint64_t>(finish - now_ns);
  pthread_mutex_unlock(&segment->lock);
  return finish;
}

EmuCounters ReadSegmentCounters(EmuSegment* segment) {
  EmuCounters copy{};
  if (Lock(segment)) {
    copy = segment->counters;
    pthread_mutex_unlock(&segment->lock);
  }
  return copy;
}

}  // namespace stagio::emu
