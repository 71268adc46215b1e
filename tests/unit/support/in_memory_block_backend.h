// A stagio::BlockBackend over an in-memory byte vector (the "storage file") for the cache unit
// tests: fault injection, call counters, recorded write-back errors and prefetch outcomes, and
// gates that hold a ReadRange or WriteRange in flight. Tests derive from it to log what they
// need (the hooks below); a gate or switch a test never uses changes nothing.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cache/block_cache.h"
#include "common/stats.h"
#include "common/status.h"

namespace stagio {
namespace test_support {

// How long a gated call waits for its release, and a test for a call to reach a gate, before
// giving up. Only an upper bound: nothing depends on it for ordering.
constexpr std::chrono::seconds kGateWaitLimit(30);

class InMemoryBlockBackend : public BlockBackend {
 public:
  explicit InMemoryBlockBackend(uint64_t block_size, std::vector<char> content = {})
      : block_size_(block_size), storage_(std::move(content)) {}

  Status ReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length, char* buffer,
                   uint64_t* bytes_read) final {
    std::unique_lock<std::mutex> lock(mutex_);
    ++read_calls_;
    OnReadBlock(index);
    OnReadRange(index, offset_in_block, length);
    changed_.notify_all();
    PassGate(lock, read_gate_);
    if (fail_reads_) return Status::IOError("injected read failure");
    const uint64_t start = index * block_size_ + offset_in_block;
    uint64_t n = 0;
    if (start < storage_.size()) n = std::min<uint64_t>(length, storage_.size() - start);
    if (n) std::memcpy(buffer, storage_.data() + start, n);
    *bytes_read = n;
    return Status::OK();
  }

  Status WriteRange(uint64_t index, uint64_t offset_in_block, const char* data,
                    uint64_t length) final {
    std::unique_lock<std::mutex> lock(mutex_);
    ++write_calls_;
    changed_.notify_all();
    PassGate(lock, write_gate_);
    if (fail_writes_) return Status::IOError("injected write failure");
    const uint64_t offset = index * block_size_ + offset_in_block;
    if (storage_.size() < offset + length) storage_.resize(offset + length, 0);
    std::memcpy(storage_.data() + offset, data, length);
    OnWritten(index, offset, length);
    return Status::OK();
  }

  void RecordWriteBackError(const Status& status) override {
    std::lock_guard<std::mutex> lock(mutex_);
    recorded_errors_.push_back(status);
  }

  FileStats* stats() override { return &stats_; }

  // Logs every prefetch outcome the cache reports (see outcomes()). Called by the cache with a
  // shard lock held; takes only mutex_, which is never held while calling into the cache.
  void OnPrefetchOutcome(PrefetchOutcome outcome) override {
    std::lock_guard<std::mutex> lock(mutex_);
    outcomes_.push_back(outcome);
  }

  // --- controls -------------------------------------------------------------------------
  void set_fail_reads(bool fail) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_reads_ = fail;
  }
  void set_fail_writes(bool fail) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_writes_ = fail;
  }
  // The next ReadRange / WriteRange waits inside the backend until Release*().
  void HoldNextRead() { Arm(read_gate_); }
  void HoldNextWrite() { Arm(write_gate_); }
  // Waits (bounded) until the held call is inside the backend; false on timeout.
  bool WaitReadHeld() { return WaitEntered(read_gate_); }
  bool WaitWriteHeld() { return WaitEntered(write_gate_); }
  void ReleaseRead() { Release(read_gate_); }
  void ReleaseWrite() { Release(write_gate_); }
  // Waits up to `limit` for the call counters to reach `count`; true if they did. Tests use a
  // short limit to give a thread the chance to make a call it must NOT make.
  bool WaitReadCalls(int count, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return read_calls_ >= count; });
  }
  bool WaitWriteCalls(int count, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return write_calls_ >= count; });
  }
  // True if a held call was never released within kGateWaitLimit.
  bool gate_timed_out() {
    std::lock_guard<std::mutex> lock(mutex_);
    return gate_timed_out_;
  }

  // --- observations ---------------------------------------------------------------------
  int read_calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return read_calls_;
  }
  int write_calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return write_calls_;
  }
  std::vector<Status> recorded_errors() {
    std::lock_guard<std::mutex> lock(mutex_);
    return recorded_errors_;
  }
  size_t error_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return recorded_errors_.size();
  }
  std::vector<PrefetchOutcome> outcomes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return outcomes_;
  }
  std::vector<char> storage() {
    std::lock_guard<std::mutex> lock(mutex_);
    return storage_;
  }
  // Bytes past the end of storage read as zeros.
  std::string StorageBytes(uint64_t offset, uint64_t length) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out(length, '\0');
    for (uint64_t i = 0; i < length; ++i) {
      if (offset + i < storage_.size()) out[i] = storage_[offset + i];
    }
    return out;
  }
  char StorageByte(uint64_t offset) {
    std::lock_guard<std::mutex> lock(mutex_);
    return offset < storage_.size() ? storage_[offset] : '\0';
  }

 protected:
  // Hooks for a test's own logs, called with mutex_ held: OnReadBlock as a ReadRange of block
  // `index` begins (after the call is counted, before its gate and any injected failure), and
  // right after it OnReadRange with the range asked for (`length` bytes at `offset_in_block`);
  // OnWritten after a WriteRange stored `length` bytes at file offset `offset`.
  virtual void OnReadBlock(uint64_t index) {}
  virtual void OnReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length) {}
  virtual void OnWritten(uint64_t index, uint64_t offset, uint64_t length) {}

  // Guards everything here and whatever a derived class's hooks touch.
  std::mutex mutex_;

 private:
  struct Gate {
    bool armed = false;
    bool entered = false;
    bool released = false;
  };

  void PassGate(std::unique_lock<std::mutex>& lock, Gate& gate) {
    if (!gate.armed) return;
    gate.armed = false;
    gate.entered = true;
    changed_.notify_all();
    if (!changed_.wait_for(lock, kGateWaitLimit, [&gate] { return gate.released; })) {
      gate_timed_out_ = true;
    }
  }
  void Arm(Gate& gate) {
    std::lock_guard<std::mutex> lock(mutex_);
    gate = Gate{};
    gate.armed = true;
  }
  bool WaitEntered(Gate& gate) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kGateWaitLimit, [&gate] { return gate.entered; });
  }
  void Release(Gate& gate) {
    std::lock_guard<std::mutex> lock(mutex_);
    gate.armed = false;  // if the call never came, do not hold a later one
    gate.released = true;
    changed_.notify_all();
  }

  const uint64_t block_size_;
  std::condition_variable changed_;
  std::vector<char> storage_;
  bool fail_reads_ = false;
  bool fail_writes_ = false;
  Gate read_gate_;
  Gate write_gate_;
  bool gate_timed_out_ = false;
  int read_calls_ = 0;
  int write_calls_ = 0;
  std::vector<Status> recorded_errors_;
  std::vector<PrefetchOutcome> outcomes_;
  FileStats stats_;
};

}  // namespace test_support
}  // namespace stagio
