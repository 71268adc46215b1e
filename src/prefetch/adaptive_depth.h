// AdaptiveDepth: how far ahead of the reader to prefetch, in bytes, learned from the outcome
// of each prefetched block.
//
// The depth grows while prefetched blocks are used in time and shrinks when they are evicted
// unused or arrive late, in the additive-increase / multiplicative-decrease way of TCP's
// congestion window, and for the same reason: growth is cheap to undo, overload is not.
//
//  - OnUsedInTime: a prefetched block was read by the application. The depth grows by one
//    step, `min_bytes` (the caller's block, or the smallest depth worth prefetching). As one
//    outcome arrives per block, a depth whose every block gets used doubles in one round, like
//    TCP slow start, so a new stream reaches a useful depth within a few rounds. A demand that
//    finds its block still in flight and waits for it also counts here: the prediction was
//    right and some latency was hidden; a deeper prefetch would have hidden all of it.
//  - OnWasted: a prefetched block was evicted without being read. The prediction ran past what
//    the application reads (or the cache cannot hold that much): the depth halves.
//  - OnLate: a prefetch completed only after the application had missed on the same block and
//    read it itself, so the block was read twice. That happens when prefetches queue behind
//    each other faster than storage serves them; prefetching less relieves the queue, whereas
//    deeper prefetching would only lengthen it. The prediction itself was right, which is
//    weaker evidence of overreach than a wasted block, so the depth shrinks by a quarter.
//
// Equilibrium: if a fraction q of prefetched blocks is wasted, growth (1 - q) * step balances
// loss q * depth / 2 at depth = 2 * step * (1 - q) / q: about 200 steps at 1% waste, 18 at
// 10%. The depth is always clamped to [min_bytes, max_bytes]. Shrinking rounds up, so it never
// reaches 0 by itself: a depth of 0 prefetches nothing, so no outcome could make it grow again.
//
// Not thread-safe: the caller serializes outcomes per stream.
#pragma once

#include <cstdint>

namespace stagio {

class AdaptiveDepth {
 public:
  AdaptiveDepth(uint64_t min_bytes, uint64_t initial_bytes, uint64_t max_bytes);

  void OnUsedInTime();
  void OnWasted();
  void OnLate();

  // Changes the bounds (max below min is raised to min) and clamps the depth into them.
  void SetBounds(uint64_t min_bytes, uint64_t max_bytes);

  uint64_t bytes() const { return bytes_; }
  uint64_t min_bytes() const { return min_bytes_; }
  uint64_t max_bytes() const { return max_bytes_; }

 private:
  void Set(uint64_t bytes);

  uint64_t min_bytes_ = 0;
  uint64_t max_bytes_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace stagio
