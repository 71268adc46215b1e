// PrefetchQueue: the blocks the I/O thread is asked to fetch ahead of use, oldest first.
//
// A job is a run of consecutive blocks (one block for a rank's own prefetches, a longer run for
// collective prefetching, which reads large contiguous ranges); the I/O thread fetches a run
// with one storage request. A job is queued at most once, keyed by its file and first block:
// every read plans the next few blocks again, and most of them are already on the list. The
// key ignores the run's length, so a run that starts where a queued one starts is taken for it
// even if it is longer, and runs that overlap without sharing a first block are both queued.
// That costs little: the cache skips, uncounted, the blocks an earlier job has brought and no
// read has used yet, so a block is fetched once however many jobs name it.
//
// The queue is bounded; when it is full the oldest job goes, because the reader has most
// likely passed it already (the newest plan is the best guess).
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
  uint64_t block_index = 0;  // the run's first block
  uint64_t epoch = 0;        // the file's invalidation epoch when the prefetch was planned
  uint64_t block_count = 1;  // the run's length in blocks
};

class PrefetchQueue {
 public:
  explicit PrefetchQueue(size_t capacity = 1024) : capacity_(capacity) {}

  // False if a job of the same file and first block is already queued (not added twice).
  bool Push(const PrefetchJob& job);
  std::optional<PrefetchJob> Pop();
  bool empty() const { return jobs_.empty(); }
  size_t size() const { return jobs_.size(); }
  // Removes every job of the file (closed or invalidated: they could only be stale).
  void DropFile(uint64_t file_id);

 private:
  using Key = std::pair<uint64_t, uint64_t>;  // (file id, first block index)

  size_t capacity_;
  std::deque<PrefetchJob> jobs_;
  std::set<Key> queued_;
};

}  // namespace stagio
