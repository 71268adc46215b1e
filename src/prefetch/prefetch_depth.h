// PrefetchDepth: a prefetcher's adaptive depth (AdaptiveDepth), fed by the outcomes the cache
// reports for its prefetched blocks.
//
// The per-handle prefetcher (FilePrefetcher) and the collective one (CollectivePrefetcher)
// learn their depth the same way, so the mapping from outcome to depth change and the initial
// depth live here once. A new stream starts two blocks ahead: one to hide the next read, one in
// case reads come faster than a block's fetch; the outcomes take it from there.
//
// Threading: outcomes come from any thread, with a cache lock held, so every method takes only
// this object's own mutex and calls nothing else.
#pragma once

#include <cstdint>
#include <mutex>

#include "cache/block_cache.h"
#include "prefetch/adaptive_depth.h"

namespace stagio {

class PrefetchDepth {
 public:
  // Bounds: one block to `max_bytes` (at least one block).
  PrefetchDepth(uint64_t block_size, uint64_t max_bytes);

  // Starts over from the initial depth within the new bounds (a new block size: what was
  // learned was learned in other units).
  void Restart(uint64_t block_size, uint64_t max_bytes);
  // Keeps what was learned, clamped into the new bounds.
  void SetBounds(uint64_t block_size, uint64_t max_bytes);

  void OnOutcome(PrefetchOutcome outcome);
  uint64_t bytes() const;

 private:
  mutable std::mutex mutex_;
  AdaptiveDepth depth_;
};

}  // namespace stagio
