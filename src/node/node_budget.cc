#include "node/node_budget.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>

namespace stagio {

static_assert(std::is_standard_layout<NodeBudgetState>::value &&
                  std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the account lives in memory shared between processes");

std::string NodeBudget::NameFor(const std::string& job_tag, int node) {
  return "/stagio." + job_tag + "." + std::to_string(node) + ".budget";
}

std::shared_ptr<NodeBudget> NodeBudget::Attach(const std::string& name, Status* status) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) {
    *status = Status::IOError("cannot open shared memory " + name + ": " + std::strerror(errno));
    return nullptr;
  }
  const size_t bytes = static_cast<size_t>(std::max<long>(sysconf(_SC_PAGESIZE), 4096));
  // Every process sizes it the same, so a second ftruncate changes nothing, and the bytes of a
  // new object are zeros: a new account.
  struct stat object {};
  void* mapping = MAP_FAILED;
  if (fstat(fd, &object) == 0 &&
      (static_cast<size_t>(object.st_size) >= bytes || ftruncate(fd, bytes) == 0)) {
    mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  const int error = errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    *status = Status::IOError("cannot map shared memory " + name + ": " + std::strerror(error));
    return nullptr;
  }
  auto* state = static_cast<NodeBudgetState*>(mapping);
  state->users.fetch_add(1);
  *status = Status::OK();
  return std::shared_ptr<NodeBudget>(new NodeBudget(state, name, bytes));
}

NodeBudget::NodeBudget(NodeBudgetState* state) : state_(state) {}

NodeBudget::NodeBudget(NodeBudgetState* state, std::string name, size_t mapped_bytes)
    : state_(state), name_(std::move(name)), mapped_bytes_(mapped_bytes) {}

NodeBudget::~NodeBudget() {
  if (name_.empty()) return;
  if (state_->users.fetch_sub(1) == 1) shm_unlink(name_.c_str());
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
