// libstagio_emu.so: an LD_PRELOAD shim that makes files under STAGIO_EMU_DIR behave like slow
// shared storage, the same way for any program above it (plain MPICH/ROMIO, stagio's app thread
// and its background I/O thread, a Python script).
//
// Design. Opens are watched: after the real open succeeds, the descriptor's resolved path
// (/proc/self/fd/N, so relative paths, openat and symlinks all resolve like the kernel does) is
// compared with the emulated directory, and the verdict is stored in a fixed array of atomics
// indexed by fd. A descriptor the shim did not see opened (a raw openat2 syscall, as
// stagio-iond's root guard makes; F_DUPFD; one inherited) gets its verdict the same way at its
// first data request. Every data request on a tracked fd does the real I/O first, then is charged:
// the device model (device_model.h), kept in a shared-memory segment (emu_segment.h) so all
// processes of the run share one device, says when the request would have finished on the
// emulated device, counting from when it arrived, and the calling thread sleeps until then
// (clock_nanosleep, absolute CLOCK_MONOTONIC). The cost is charged from the model for every
// request, whether or not the page cache served it, so the page cache cannot hide the cost of
// the emulated storage, and a plain ROMIO run and a stagio run pay by the same rules.
// fsync and fdatasync are charged as requests of 0 bytes. A failed call is not charged.
//
// Without STAGIO_EMU_DIR the shim charges nothing and every call passes straight through, so
// mpiexec, hydra proxies and helper programs that inherit LD_PRELOAD behave as before.
//
// Constraints of living under every program: real functions are found lazily with
// dlsym(RTLD_NEXT) (calls can arrive before main and before any constructor of ours); no
// allocation, no iostreams, no locks of our own on the I/O path other than the segment's
// mutex, and warnings are formatted into a stack buffer and written with the real write().
//
// Not charged (the limits of interposing libc calls): I/O through mmap, POSIX AIO, io_uring,
// sendfile/splice/copy_file_range, stdio streams that glibc opened itself (fopen), and data
// requests made by raw syscalls. dup/dup2/dup3 are followed.
#undef _FORTIFY_SOURCE  // we define read, pread, ...: the fortified inline versions must not exist
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>

#include "emu_env.h"
#include "emu_segment.h"

// The entry points of glibc's _FORTIFY_SOURCE builds (Debian compiles its packages with it).
// Their headers only declare them under _FORTIFY_SOURCE, so we declare them ourselves.
extern "C" {
int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);
ssize_t __read_chk(int fd, void* buffer, size_t count, size_t buffer_size);
ssize_t __pread_chk(int fd, void* buffer, size_t count, off_t offset, size_t buffer_size);
ssize_t __pread64_chk(int fd, void* buffer, size_t count, off64_t offset, size_t buffer_size);
}

namespace stagio::emu {
namespace {

// ---- The real functions, found on first use.

void* NextSymbol(std::atomic<void*>* slot, const char* name) {
  void* function = slot->load(std::memory_order_acquire);
  if (function == nullptr) {
    function = dlsym(RTLD_NEXT, name);
    slot->store(function, std::memory_order_release);
  }
  return function;
}

// The next definition of libc function `fn`, typed from libc's own declaration. The slot is
// constant-initialized, so using it needs no guard and no constructor.
#define STAGIO_EMU_REAL(fn)                                                     \
  ([]() {                                                                       \
    static std::atomic<void*> slot{nullptr};                                    \
    return reinterpret_cast<decltype(&::fn)>(::stagio::emu::NextSymbol(&slot, #fn)); \
  }())

// ---- Warnings: formatted on the stack, written with the real write.

__attribute__((format(printf, 1, 2))) void Warn(const char* format, ...) {
  char message[1024];
  int length = snprintf(message, sizeof(message), "stagio-emu: ");
  va_list arguments;
  va_start(arguments, format);
  length += vsnprintf(message + length, sizeof(message) - length - 1, format, arguments);
  va_end(arguments);
  if (length > static_cast<int>(sizeof(message)) - 2) length = sizeof(message) - 2;
  message[length++] = '\n';
  if (auto real_write = STAGIO_EMU_REAL(write)) real_write(STDERR_FILENO, message, length);
}

// Set while this thread sets up the segment: an open that libc makes for us is never tracked,
// which also keeps pthread_once below from being re-entered.
__attribute__((tls_model("initial-exec"))) thread_local bool t_setting_up = false;

// ---- The emulated directory, from STAGIO_EMU_DIR.

struct EmulatedDir {
  bool enabled;
  size_t length;  // of path, without a trailing '/', so "/" has length 0
  char path[PATH_MAX];
};
EmulatedDir g_dir;
pthread_once_t g_dir_once = PTHREAD_ONCE_INIT;

void ResolveEmulatedDir() {
  const char* configured = GetEnv(kDirVariable);
  if (configured == nullptr) return;  // not emulating: pass everything through
  if (realpath(configured, g_dir.path) == nullptr) {
    Warn("%s=%s cannot be resolved (%s): nothing is emulated in process %d", kDirVariable,
         configured, strerror(errno), static_cast<int>(getpid()));
    return;
  }
  g_dir.length = strlen(g_dir.path);
  if (g_dir.length == 1) g_dir.length = 0;  // "/": everything is under it
  g_dir.enabled = true;
}

bool EmulationEnabled() {
  pthread_once(&g_dir_once, ResolveEmulatedDir);
  return g_dir.enabled;
}

bool IsUnderEmulatedDir(const char* path) {
  return strncmp(path, g_dir.path, g_dir.length) == 0 &&
         (path[g_dir.length] == '/' || path[g_dir.length] == '\0');
}

// ---- The shared segment, opened (and created if need be) at the first emulated open.

EmuSegment* g_segment;
pthread_once_t g_segment_once = PTHREAD_ONCE_INIT;

// The parameters this process's environment asks for. Invalid values keep their default; only
// the process that creates the segment warns, so a job says it once, not once per rank.
DeviceParams ParamsFromEnvironment(bool warn) {
  DeviceParams params;
  for (DeviceParam param : kAllDeviceParams) {
    const char* text = GetEnv(EnvVariable(param));
    if (text == nullptr) continue;
    if (const char* why = SetDeviceParam(&params, param, text); why != nullptr && warn) {
      char fallback[64];
      FormatDeviceParam(params, param, fallback, sizeof(fallback));
      Warn("ignoring %s='%s' (%s); using the default %s", EnvVariable(param), text, why,
           fallback);
    }
  }
  return params;
}

bool SameDevice(const DeviceParams& a, const DeviceParams& b) {
  const DeviceState x = MakeDeviceState(a);
  const DeviceState y = MakeDeviceState(b);
  return x.latency_ns == y.latency_ns && x.bandwidth_bytes_per_s == y.bandwidth_bytes_per_s &&
         x.parallel == y.parallel && x.link_out.latency_ns == y.link_out.latency_ns &&
         x.link_out.bytes_per_s == y.link_out.bytes_per_s;
}

void OpenSharedSegment() {
  char name[256];
  if (const char* configured = GetEnv(kShmVariable)) {
    snprintf(name, sizeof(name), "%s", configured);
  } else {
    DefaultSegmentName(name, sizeof(name));
  }
  const DeviceParams wanted = ParamsFromEnvironment(/*warn=*/false);
  const SegmentOpenResult opened = OpenSegment(name, SegmentMode::kCreateOrAttach, wanted);
  if (opened.segment == nullptr) {
    Warn("cannot use shared segment %s (%s: %s): I/O under %s is not emulated in process %d",
         name, opened.failed_step, strerror(opened.error), g_dir.path,
         static_cast<int>(getpid()));
    return;
  }
  if (opened.created) {
    ParamsFromEnvironment(/*warn=*/true);
  } else if (!SameDevice(opened.segment->params, wanted)) {
    const DeviceParams& used = opened.segment->params;
    Warn("segment %s already holds a device with latency %g ms, bandwidth %g MB/s, %d servers; "
         "this process uses it, not the %g ms, %g MB/s, %d servers its environment asks for "
         "(a segment left by an earlier run? remove /dev/shm%s)",
         name, used.latency_ms, used.bandwidth_mbps, used.parallel, wanted.latency_ms,
         wanted.bandwidth_mbps, wanted.parallel, name);
  }
  g_segment = opened.segment;
}

EmuSegment* Segment() {
  t_setting_up = true;
  pthread_once(&g_segment_once, OpenSharedSegment);
  t_setting_up = false;
  return g_segment;
}

// ---- Which descriptors are emulated.

constexpr int kMaxTrackedFds = 1 << 20;  // Linux's default hard limit on open files
// A descriptor's verdict: not known yet (never seen opened, or closed since), or known.
enum Verdict : uint8_t { kUnknown = 0, kPlain = 1, kEmulated = 2 };
std::atomic<uint8_t> g_tracked[kMaxTrackedFds];
std::atomic<bool> g_warned_fd_limit{false};

bool ShouldTrack(int fd, bool* known);

bool IsTracked(int fd) {
  if (fd < 0 || fd >= kMaxTrackedFds) return false;
  const uint8_t verdict = g_tracked[fd].load(std::memory_order_acquire);
  if (verdict != kUnknown) return verdict == kEmulated;
  // Opened where the shim could not see it: judge it now, unless an open judges it meanwhile.
  bool known = false;
  const bool tracked = ShouldTrack(fd, &known);
  if (!known) return false;
  uint8_t expected = kUnknown;
  g_tracked[fd].compare_exchange_strong(expected, tracked ? kEmulated : kPlain);
  return tracked;
}

// The descriptor is being closed: its number may come back as another file.
void ForgetFd(int fd) {
  if (fd >= 0 && fd < kMaxTrackedFds) g_tracked[fd].store(kUnknown, std::memory_order_release);
}

void SetTracked(int fd, bool tracked) {
  if (fd < 0) return;
  if (fd >= kMaxTrackedFds) {
    if (tracked && !g_warned_fd_limit.exchange(true)) {
      Warn("descriptor %d is past the %d the emulator can follow: its I/O is not charged", fd,
           kMaxTrackedFds);
    }
    return;
  }
  // Cleared before the real close (the number may be reused at once by another thread's open)
  // and set after the real open (nobody else can use the number before open returns it).
  g_tracked[fd].store(tracked ? kEmulated : kPlain, std::memory_order_release);
}

// Whether `fd` is a file under the emulated directory; *known says whether that could be told
// (not while the segment is being set up, nor for a number that is not open).
bool ShouldTrack(int fd, bool* known) {
  *known = false;
  if (t_setting_up) return false;
  *known = true;
  if (!EmulationEnabled()) return false;
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char path[PATH_MAX];
  const ssize_t length = readlink(link, path, sizeof(path) - 1);
  if (length <= 0) {
    *known = false;
    return false;
  }
  path[length] = '\0';
  return IsUnderEmulatedDir(path) && Segment() != nullptr;
}

// Every successful open sets the verdict, tracked or not, so a stale mark left by a close we
// did not see (a raw syscall) is overwritten when the number is reused.
int NoteOpened(int fd) {
  if (fd < 0) return fd;
  const int saved_errno = errno;
  bool known = false;
  SetTracked(fd, ShouldTrack(fd, &known));
  errno = saved_errno;
  return fd;
}

int NoteDuplicated(int old_fd, int new_fd) {
  if (new_fd >= 0) SetTracked(new_fd, IsTracked(old_fd));
  return new_fd;
}

// ---- Charging.

int64_t MonotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

void SleepUntil(int64_t deadline_ns) {
  const timespec deadline = {static_cast<time_t>(deadline_ns / 1000000000LL),
                             static_cast<long>(deadline_ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
  }
}

// Runs `io` (the real call), then charges it to the emulated device if `fd` is tracked:
// `transferred` turns the call's result into bytes moved, or -1 for a failed call.
template <typename Io, typename Transferred>
auto Charged(int fd, RequestKind kind, Io io, Transferred transferred) {
  if (!IsTracked(fd)) return io();
  const int64_t arrival_ns = MonotonicNs();
  const auto result = io();
  const int64_t bytes = transferred(result);
  if (bytes >= 0) {
    const int saved_errno = errno;
    SleepUntil(ChargeSegment(g_segment, kind, arrival_ns, static_cast<uint64_t>(bytes)));
    errno = saved_errno;
  }
  return result;
}

template <typename Io>
ssize_t ChargedData(int fd, RequestKind kind, Io io) {
  return Charged(fd, kind, io, [](ssize_t result) -> int64_t { return result; });
}

template <typename Io>
int ChargedSync(int fd, Io io) {
  return Charged(fd, RequestKind::kSync, io, [](int result) -> int64_t {
    return result == 0 ? 0 : -1;
  });
}

bool OpenNeedsMode(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

}  // namespace
}  // namespace stagio::emu

// ---- The interposed functions: decide whether the fd is emulated, call libc, charge.

using stagio::emu::ChargedData;
using stagio::emu::ChargedSync;
using stagio::emu::ForgetFd;
using stagio::emu::NoteDuplicated;
using stagio::emu::NoteOpened;
using stagio::emu::OpenNeedsMode;
using stagio::emu::RequestKind;
using stagio::emu::SetTracked;
#define REAL STAGIO_EMU_REAL
#define EXPORT extern "C" __attribute__((visibility("default")))

// open's mode argument exists only when the flags create a file; reading it otherwise would
// read whatever the caller left in that register.
#define STAGIO_EMU_MODE_ARGUMENT(flags, mode)  \
  mode_t mode = 0;                             \
  if (OpenNeedsMode(flags)) {                  \
    va_list arguments;                         \
    va_start(arguments, flags);                \
    mode = va_arg(arguments, mode_t);          \
    va_end(arguments);                         \
  }

EXPORT int open(const char* path, int flags, ...) {
  STAGIO_EMU_MODE_ARGUMENT(flags, mode);
  return NoteOpened(REAL(open)(path, flags, mode));
}
EXPORT int open64(const char* path, int flags, ...) {
  STAGIO_EMU_MODE_ARGUMENT(flags, mode);
  return NoteOpened(REAL(open64)(path, flags, mode));
}
EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  STAGIO_EMU_MODE_ARGUMENT(flags, mode);
  return NoteOpened(REAL(openat)(dirfd, path, flags, mode));
}
EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  STAGIO_EMU_MODE_ARGUMENT(flags, mode);
  return NoteOpened(REAL(openat64)(dirfd, path, flags, mode));
}
EXPORT int creat(const char* path, mode_t mode) { return NoteOpened(REAL(creat)(path, mode)); }
EXPORT int creat64(const char* path, mode_t mode) {
  return NoteOpened(REAL(creat64)(path, mode));
}
EXPORT int __open_2(const char* path, int flags) {
  return NoteOpened(REAL(__open_2)(path, flags));
}
EXPORT int __open64_2(const char* path, int flags) {
  return NoteOpened(REAL(__open64_2)(path, flags));
}
EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return NoteOpened(REAL(__openat_2)(dirfd, path, flags));
}
EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  return NoteOpened(REAL(__openat64_2)(dirfd, path, flags));
}

EXPORT int dup(int fd) noexcept { return NoteDuplicated(fd, REAL(dup)(fd)); }
EXPORT int dup2(int fd, int new_fd) noexcept {
  // dup2 onto an open descriptor closes it first; the result says what new_fd now is.
  return NoteDuplicated(fd, REAL(dup2)(fd, new_fd));
}
EXPORT int dup3(int fd, int new_fd, int flags) noexcept {
  return NoteDuplicated(fd, REAL(dup3)(fd, new_fd, flags));
}

EXPORT int close(int fd) {
  ForgetFd(fd);
  return REAL(close)(fd);
}
EXPORT int close_range(unsigned int first, unsigned int last, int flags) noexcept {
  if ((flags & CLOSE_RANGE_CLOEXEC) == 0) {  // with CLOEXEC nothing closes now
    const unsigned int end = std::min(last, stagio::emu::kMaxTrackedFds - 1u);
    for (unsigned int fd = first; fd <= end; ++fd) ForgetFd(static_cast<int>(fd));
  }
  return REAL(close_range)(first, last, flags);
}
EXPORT int fclose(FILE* stream) {
  if (stream != nullptr) ForgetFd(fileno(stream));
  return REAL(fclose)(stream);
}

EXPORT ssize_t read(int fd, void* buffer, size_t count) {
  return ChargedData(fd, RequestKind::kRead, [&] { return REAL(read)(fd, buffer, count); });
}
EXPORT ssize_t __read_chk(int fd, void* buffer, size_t count, size_t buffer_size) {
  return ChargedData(fd, RequestKind::kRead,
                     [&] { return REAL(__read_chk)(fd, buffer, count, buffer_size); });
}
EXPORT ssize_t write(int fd, const void* buffer, size_t count) {
  return ChargedData(fd, RequestKind::kWrite, [&] { return REAL(write)(fd, buffer, count); });
}
EXPORT ssize_t pread(int fd, void* buffer, size_t count, off_t offset) {
  return ChargedData(fd, RequestKind::kRead,
                     [&] { return REAL(pread)(fd, buffer, count, offset); });
}
EXPORT ssize_t pread64(int fd, void* buffer, size_t count, off64_t offset) {
  return ChargedData(fd, RequestKind::kRead,
                     [&] { return REAL(pread64)(fd, buffer, count, offset); });
}
EXPORT ssize_t __pread_chk(int fd, void* buffer, size_t count, off_t offset,
                           size_t buffer_size) {
  return ChargedData(fd, RequestKind::kRead, [&] {
    return REAL(__pread_chk)(fd, buffer, count, offset, buffer_size);
  });
}
EXPORT ssize_t __pread64_chk(int fd, void* buffer, size_t count, off64_t offset,
                             size_t buffer_size) {
  return ChargedData(fd, RequestKind::kRead, [&] {
    return REAL(__pread64_chk)(fd, buffer, count, offset, buffer_size);
  });
}
EXPORT ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  return ChargedData(fd, RequestKind::kWrite,
                     [&] { return REAL(pwrite)(fd, buffer, count, offset); });
}
EXPORT ssize_t pwrite64(int fd, const void* buffer, size_t count, off64_t offset) {
  return ChargedData(fd, RequestKind::kWrite,
                     [&] { return REAL(pwrite64)(fd, buffer, count, offset); });
}

EXPORT ssize_t readv(int fd, const struct iovec* iov, int count) {
  return ChargedData(fd, RequestKind::kRead, [&] { return REAL(readv)(fd, iov, count); });
}
EXPORT ssize_t writev(int fd, const struct iovec* iov, int count) {
  return ChargedData(fd, RequestKind::kWrite, [&] { return REAL(writev)(fd, iov, count); });
}
EXPORT ssize_t preadv(int fd, const struct iovec* iov, int count, off_t offset) {
  return ChargedData(fd, RequestKind::kRead,
                     [&] { return REAL(preadv)(fd, iov, count, offset); });
}
EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t offset) {
  return ChargedData(fd, RequestKind::kWrite,
                     [&] { return REAL(pwritev)(fd, iov, count, offset); });
}
EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int count, off64_t offset) {
  return ChargedData(fd, RequestKind::kRead,
                     [&] { return REAL(preadv64)(fd, iov, count, offset); });
}
EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int count, off64_t offset) {
  return ChargedData(fd, RequestKind::kWrite,
                     [&] { return REAL(pwritev64)(fd, iov, count, offset); });
}
#if __GLIBC_PREREQ(2, 26)  // preadv2 and pwritev2 appeared in glibc 2.26
EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int count, off_t offset, int flags) {
  return ChargedData(fd, RequestKind::kRead,
                     [&] { return REAL(preadv2)(fd, iov, count, offset, flags); });
}
EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int count, off_t offset, int flags) {
  return ChargedData(fd, RequestKind::kWrite,
                     [&] { return REAL(pwritev2)(fd, iov, count, offset, flags); });
}
EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int count, off64_t offset,
                          int flags) {
  return ChargedData(fd, RequestKind::kRead,
                     [&] { return REAL(preadv64v2)(fd, iov, count, offset, flags); });
}
EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int count, off64_t offset,
                           int flags) {
  return ChargedData(fd, RequestKind::kWrite,
                     [&] { return REAL(pwritev64v2)(fd, iov, count, offset, flags); });
}
#endif

EXPORT int fsync(int fd) { return ChargedSync(fd, [&] { return REAL(fsync)(fd); }); }
EXPORT int fdatasync(int fd) { return ChargedSync(fd, [&] { return REAL(fdatasync)(fd); }); }
