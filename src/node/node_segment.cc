#include "node/node_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "common/polite_pause.h"
#include "node/background_unmap.h"

namespace stagio {

namespace {

// The front of the object: whether the table behind it is ready, and who has mapped it.
struct Door {
  static constexpr uint32_t kBeingMade = 0, kReady = 1, kFailed = 2;
  std::atomic<uint32_t> state;
  std::atomic<int32_t> attached;  // ranks that have seen the door ready or failed
  uint64_t table_bytes;
};
// A node-mate reads the door with pread until it is ready, so it never maps an object that
// could still change size; pread copies bytes, so it reads them into this plain mirror.
struct DoorBytes {
  uint32_t state;
  int32_t attached;
  uint64_t table_bytes;
};
static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<int32_t>::is_always_lock_free,
              "the door's atomics are plain words in shared memory");
static_assert(sizeof(Door) == sizeof(DoorBytes) &&
                  offsetof(DoorBytes, table_bytes) == sizeof(uint32_t) + sizeof(int32_t),
              "the mirror has the door's layout");
// The table starts after the door, aligned for the frames' pages on any page size here.
constexpr size_t kDoorBytes = 64 * 1024;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Counts this rank among those that have seen the door (ready or failed); the last of the
// node's ranks removes the name, which nobody needs any more.
void CountAttached(Door* door, const NodeSegment::Place& place) {
  if (door->attached.fetch_add(1) + 1 == place.node_size) shm_unlink(place.name.c_str());
}

// The leader's way of saying it failed: a door-sized object whose door says so, which its
// node-mates see at once instead of waiting out their timeout, and count themselves on as
// on a ready one. If even that cannot be written, the name goes and they wait it out.
void MarkFailed(int fd, const NodeSegment::Place& place) {
  DoorBytes failed{Door::kFailed, 1, 0};
  if (place.node_size == 1 || ftruncate(fd, static_cast<off_t>(kDoorBytes)) != 0 ||
      pwrite(fd, &failed, sizeof(failed), 0) != static_cast<ssize_t>(sizeof(failed))) {
    shm_unlink(place.name.c_str());
  }
}

// The maker's part. Returns the mapping of `total` bytes, the table laid out and the door
// open, or null with the reason. A name that exists already is left alone (*taken): it is
// someone else's, or with Place::first_comer_makes a node-mate's. *created says whether this
// rank made the name, the door that says it failed included.
void* MakeSegment(const NodeSegment::Place& place, const NodeBlockTable::Layout& layout,
                  size_t total, Status* status, bool* taken, bool* created) {
  const int fd = shm_open(place.name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    *taken = errno == EEXIST;
    *status = Status::IOError(Errno("cannot create shared memory " + place.name));
    return nullptr;
  }
  *created = true;
  void* mapping = nullptr;
  // Memory a tmpfs cannot supply would kill a rank (SIGBUS) on first touch: check first.
  struct statvfs room {};
  if (statvfs("/dev/shm", &room) == 0 &&
      static_cast<uint64_t>(room.f_bavail) * room.f_frsize < total) {
    *status = Status::IOError("/dev/shm has " +
                              std::to_string(static_cast<uint64_t>(room.f_bavail) *
                                             room.f_frsize >> 20) +
                              " MiB free, the node cache needs " +
                              std::to_string(total >> 20) + " MiB");
  } else if (ftruncate(fd, static_cast<off_t>(total)) != 0) {
    *status = Status::IOError(Errno("cannot size shared memory " + place.name));
  } else {
    mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED) {
      mapping = nullptr;
      *status = Status::IOError(Errno("cannot map shared memory " + place.name));
    }
  }
  if (mapping == nullptr) {
    MarkFailed(fd, place);
    close(fd);
    return nullptr;
  }
  close(fd);
  NodeBlockTable::Create(static_cast<char*>(mapping) + kDoorBytes, layout);
  Door* door = new (mapping) Door();
  door->table_bytes = total - kDoorBytes;
  door->attached.store(1);
  door->state.store(Door::kReady, std::memory_order_release);
  if (place.node_size == 1) shm_unlink(place.name.c_str());
  return mapping;
}

// A node-mate's part: waits for the leader's door, then maps the object (of the size the door
// gives: the leader's budget decides the table, whatever this rank's settings say). Sets
// *total to the size mapped. With `missing`, a name that is not there ends the wait at once
// (*missing, null, status untouched): the caller makes the segment itself, or needs none.
void* AttachSegment(const NodeSegment::Place& place, std::chrono::milliseconds timeout,
                    size_t* total, Status* status, bool* missing = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The leader takes about 100 µs to make the segment: the first looks come within the pause's
  // yielding time.
  PolitePause pause(std::chrono::microseconds(20), std::chrono::microseconds(2000));
  while (true) {
    const int fd = shm_open(place.name.c_str(), O_RDWR, 0);
    if (fd >= 0) {
      DoorBytes door{};
      struct stat object {};
      const bool door_there = fstat(fd, &object) == 0 &&
                              static_cast<size_t>(object.st_size) >= kDoorBytes &&
                              pread(fd, &door, sizeof(door), 0) ==
                                  static_cast<ssize_t>(sizeof(door));
      const uint32_t state = door_there ? door.state : Door::kBeingMade;
      if (state == Door::kFailed || state == Door::kReady) {
        *total = state == Door::kReady ? kDoorBytes + door.table_bytes : kDoorBytes;
        void* mapping = nullptr;
        if (static_cast<size_t>(object.st_size) != *total) {
          *status = Status::IOError(place.name + " is not the size its door says");
        } else {
          mapping = mmap(nullptr, *total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          if (mapping == MAP_FAILED) {
            mapping = nullptr;
            *status = Status::IOError(Errno("cannot map shared memory " + place.name));
          }
        }
        close(fd);
        if (mapping != nullptr) {
          // What the leader wrote before opening the door, before this rank reads it.
          Door* mapped = static_cast<Door*>(mapping);
          (void)mapped->state.load(std::memory_order_acquire);
          CountAttached(mapped, place);
        }
        if (state == Door::kFailed) {
          if (mapping != nullptr) munmap(mapping, *total);
          *status = Status::IOError("the node's first rank could not make its shared memory");
          return nullptr;
        }
        return mapping;
      }
      close(fd);
    } else if (missing != nullptr && errno == ENOENT) {
      *missing = true;
      return nullptr;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      *status = Status::IOError("the node's first rank did not make its shared memory within " +
                                std::to_string(timeout.count()) + " ms");
      return nullptr;
    }
    pause();
  }
}

}  // namespace

std::string NodeSegment::NameFor(const std::string& job_tag, int leader_world_rank,
                                 uint64_t serial, uint64_t nonce) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(nonce));
  return "/stagio." + job_tag + "." + std::to_string(leader_world_rank) + "." +
         std::to_string(serial) + "." + hex;
}

NodeBlockTable::Layout NodeSegment::LayoutFor(uint64_t block_size, uint64_t bytes_per_rank,
                                              int ranks, bool budgeted) {
  NodeBlockTable::Layout layout;
  layout.budgeted = budgeted;
  layout.frame_size = block_size;
  const uint64_t frames_per_rank =
      std::max<uint64_t>(1, bytes_per_rank / std::max<uint64_t>(1, block_size));
  layout.frames = static_cast<uint32_t>(
      std::min<uint64_t>(frames_per_rank * static_cast<uint64_t>(std::max(1, ranks)), 1u << 30));
  return layout;
}

std::unique_ptr<NodeSegment> NodeSegment::Create(const Place& place, uint64_t block_size,
                                                 uint64_t bytes_per_rank, Status* status,
                                                 std::chrono::milliseconds attach_timeout,
                                                 bool* created_name) {
  // The maker's budget decides whether the table is budgeted.
  const NodeBlockTable::Layout layout =
      LayoutFor(block_size, bytes_per_rank, place.node_size, place.budget != nullptr);
  const size_t wanted = kDoorBytes + NodeBlockTable::BytesFor(layout);
  const bool makes = place.first_comer_makes || place.is_leader;
  bool created = false;
  size_t total = wanted;
  void* mapping = nullptr;
  // A first comer that finds the name taken attaches; if the name is gone by then (its maker
  // closed a read-only file, which needs no collective), it makes the segment anew. A few
  // rounds: each needs the name to come and go in between.
  for (int round = 0; round < 3 && mapping == nullptr; ++round) {
    total = wanted;
    bool taken = false;
    if (makes) mapping = MakeSegment(place, layout, total, status, &taken, &created);
    if (mapping != nullptr || (makes && !(place.first_comer_makes && taken))) break;
    bool missing = false;
    mapping = AttachSegment(place, attach_timeout, &total, status,
                            place.first_comer_makes ? &missing : nullptr);
    if (!missing) break;
    *status = Status::IOError(place.name + " kept going away while this rank attached");
  }
  if (created_name != nullptr) *created_name = created;
  const bool made_it = created && mapping != nullptr;
  if (mapping == nullptr) return nullptr;
  *status = Status::OK();
  return std::unique_ptr<NodeSegment>(new NodeSegment(
      place, made_it, mapping, total, static_cast<char*>(mapping) + kDoorBytes));
}

std::unique_ptr<NodeSegment> NodeSegment::AttachIfThere(const Place& place, Status* status,
                                                        std::chrono::milliseconds attach_timeout) {
  size_t total = 0;
  bool missing = false;
  void* mapping = AttachSegment(place, attach_timeout, &total, status, &missing);
  if (mapping == nullptr) {
    if (missing) *status = Status::OK();
    return nullptr;
  }
  *status = Status::OK();
  return std::unique_ptr<NodeSegment>(new NodeSegment(
      place, false, mapping, total, static_cast<char*>(mapping) + kDoorBytes));
}

NodeSegment::NodeSegment(const Place& place, bool made_it, void* mapping, size_t mapped_bytes,
                         void* table_memory)
    : name_(place.name),
      made_it_(made_it),
      node_size_(place.node_size),
      mapping_(mapping),
      mapped_bytes_(mapped_bytes),
      table_(table_memory),
      budget_(place.budget) {
  table_.ShareBudget(budget_);
  // The maker counts the table among the node's open ones (its view was counted when it made
  // the table); a node-mate adds its view. The last view to go takes the table out.
  if (made_it_ && budget_) budget_->TableOpened();
  if (!made_it_) table_.AddView();
}

NodeSegment::~NodeSegment() {
  // A node-mate that gave up waiting, or never came, did not remove the name: the maker does,
  // once its own use ends (every node-mate's use is over by then: close is collective).
  if (made_it_) shm_unlink(name_.c_str());
  // The last view credits what the node's processes charged for the table, whoever made the
  // charges and whenever the others closed.
  const std::optional<uint64_t> charged = table_.RemoveView();
  if (charged && budget_ && table_.budgeted()) budget_->TableClosed(*charged);
  // The last process to unmap the segment frees its pages, about 0.5 ms per MiB here, which
  // close need not wait for. A table that held little is unmapped at once: handing it over to
  // the unmapping thread cost as much (its wake-up) as the unmap itself (30 µs, mostly
  // flushing the other cores' TLBs).
  constexpr uint64_t kUnmapAtOnceBytes = 2 << 20;
  if (table_.held_bytes() <= kUnmapAtOnceBytes) {
    munmap(mapping_, mapped_bytes_);
  } else {
    UnmapInBackground(mapping_, mapped_bytes_);
  }
}

}  // namespace stagio
