#include "node/node_budget.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <type_traits>

namespace stagio {

static_assert(std::is_standard_layout<NodeBudgetState>::value &&
                  std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the account lives in memory shared between processes");

std::string NodeBudget::NameFor(const std::string& job_tag, int node) {
  return "/stagio." + job_tag + "." + std::to_string(node) + ".budget";
}

namespace {

// `users` with this bit set: the last user let go and is removing the name. A process that
// finds it so must not join, but wait for the name to go and make a new account.
constexpr uint32_t kRemoving = 1u << 31;
constexpr int kAttachTries = 2000;  // 1 ms apart: a name being removed goes in microseconds

// Maps the named object, made if absent, with its page allocated first: a page a full tmpfs
// cannot supply would kill the process (SIGBUS) on first touch instead of failing here.
NodeBudgetState* MapAccount(const std::string& name, size_t bytes, Status* status) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) {
    *status = Status::IOError("cannot open shared memory " + name + ": " + std::strerror(errno));
    return nullptr;
  }
  // Allocating what is allocated already changes nothing, and new bytes are zeros: a new
  // account.
  void* mapping = MAP_FAILED;
  const int allocated = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (allocated == 0) mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = allocated != 0 ? allocated : errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    *status = Status::IOError("cannot map shared memory " + name + ": " + std::strerror(error));
    return nullptr;
  }
  return static_cast<NodeBudgetState*>(mapping);
}

// Counts this process among the account's users, unless its last user is removing it.
bool Join(NodeBudgetState* state) {
  uint32_t users = state->users.load();
  while ((users & kRemoving) == 0) {
    if (state->users.compare_exchange_weak(users, users + 1)) return true;
  }
  return false;
}

}  // namespace

std::shared_ptr<NodeBudget> NodeBudget::Attach(const std::string& name, Status* status) {
  const size_t bytes = static_cast<size_t>(std::max<long>(sysconf(_SC_PAGESIZE), 4096));
  for (int attempt = 0; attempt < kAttachTries; ++attempt) {
    NodeBudgetState* state = MapAccount(name, bytes, status);
    if (state == nullptr) return nullptr;
    if (Join(state)) {
      *status = Status::OK();
      return std::shared_ptr<NodeBudget>(new NodeBudget(state, name, bytes));
    }
    munmap(state, bytes);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  *status = Status::IOError("shared memory " + name + " was still being removed");
  return nullptr;
}

NodeBudget::NodeBudget(NodeBudgetState* state) : state_(state) {}

NodeBudget::NodeBudget(NodeBudgetState* state, std::string name, size_t mapped_bytes)
    : state_(state), name_(std::move(name)), mapped_bytes_(mapped_bytes) {}

NodeBudget::~NodeBudget() {
  if (name_.empty()) return;
  // The last user marks the account as going before it removes the name, so that no process
  // joins an account whose name is gone (it would keep books apart from a new one's).
  uint32_t users = state_->users.load();
  while (true) {
    const uint32_t next = users == 1 ? kRemoving : users - 1;
    if (state_->users.compare_exchange_weak(users, next)) break;
  }
  if (users == 1) shm_unlink(name_.c_str());
  munmap(state_, mapped_bytes_);
}

void NodeBudget::TableOpened() { state_->tables.fetch_add(1); }

void NodeBudget::TableClosed(uint64_t held_bytes) {
  Give(held_bytes);
  uint32_t tables = state_->tables.load();
  while (tables > 0 && !state_->tables.compare_exchange_weak(tables, tables - 1)) {
  }
}

uint64_t NodeBudget::FairShare(uint64_t limit) const {
  return limit / std::max<uint32_t>(1, state_->tables.load());
}

bool NodeBudget::TryTake(uint64_t bytes, uint64_t limit, uint64_t table_held) {
  const bool within_share = table_held + bytes <= FairShare(limit);
  uint64_t held = state_->held_bytes.load();
  while (within_share || held + bytes <= limit) {
    if (state_->held_bytes.compare_exchange_weak(held, held + bytes)) return true;
  }
  return false;
}

void NodeBudget::Give(uint64_t bytes) {
  uint64_t held = state_->held_bytes.load();
  // Never below zero, whatever order the node's tables give back and close in.
  while (!state_->held_bytes.compare_exchange_weak(held, held - std::min(held, bytes))) {
  }
}

bool NodeBudget::ShouldGiveBack(uint64_t limit, uint64_t table_held) const {
  return state_->held_bytes.load() > limit && table_held > FairShare(limit);
}

}  // namespace stagio
