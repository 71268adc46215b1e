// PrefetchQueue: the blocks the I/O thread is asked to fetch ahead of use, oldest first.
//
// A block is queued at most once: every read plans the next few blocks again, and most of
// them are already on the list. The queue is bounded; when it is full the oldest job goes,
// because the reader has most likely passed it already (the newest plan is the best guess).
//
// Not thread-safe: the I/O thread's mutex guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <utility>

namespace stagio {

struct PrefetchJob {
  uint64_t file_id = 0;
  uint64_t block_index = 0;
  uint64_t epoch = 0;  // the file's invalidation epoch when the prefetch was planned
};

class PrefetchQueue {
 public:
  explicit PrefetchQueue(size_t capacity = 1024) : capacity_(capacity) {}

  // False if the block is already queued (the job is not added twice).
  bool Push(const PrefetchJob& job);
  std::optional<PrefetchJob> Pop();
  bool empty() const { return jobs_.empty(); }
  size_t size() const { return jobs_.size(); }
  // Removes every job of the file (closed or invalidated: they could only be stale).
  void DropFile(uint64_t file_id);

 private:
  using Key = std::pair<uint64_t, uint64_t>;  // (file id, block index)

  size_t capacity_;
  std::deque<PrefetchJob> jobs_;
  std::set<Key> queued_;
};

}  // namespace stagio
