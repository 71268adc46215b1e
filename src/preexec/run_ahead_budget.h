// RunAheadBudget: how far a pre-execution helper may run ahead of the main thread.
//
// What the helper fetches is kept in the cache until the main thread reads it: a prefetched
// block no read has used is not evicted while other blocks can go (BlockCache). So the helper
// must not fetch more than the cache can hold besides the main thread's own blocks, or its
// early fetches would be evicted unused by its later ones (and hold memory the main thread
// needs). The budget counts the bytes each helper call announced until the main thread has
// finished the call they stand for; a helper whose next call would go over the limit waits for
// the oldest of them first. Seed 001 gives announced blocks priority in the cache; the bound is
// what keeps that priority from filling the cache.
//
// Threading: the helper thread's.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include "preexec/main_thread_progress.h"

namespace stagio {

class RunAheadBudget {
 public:
  explicit RunAheadBudget(uint64_t limit_bytes) : limit_(limit_bytes) {}

  struct Announcement {
    std::shared_ptr<MainThreadProgress> main;  // the file's
    uint64_t sequence;                         // the call the bytes are for
    uint64_t bytes;
  };

  // The helper fetched (or found cached) `bytes` for call `sequence` of the file.
  void Add(std::shared_ptr<MainThreadProgress> main, uint64_t sequence, uint64_t bytes);
  // Forgets the announcements of calls the main thread has finished, and of closed files.
  void ReleaseConsumed();
  // The announcement to wait for before `bytes` more may be fetched: the oldest, when adding
  // them would exceed the limit. Null when they fit, or when nothing is outstanding (a single
  // call larger than the limit still goes, alone).
  const Announcement* MustWaitFor(uint64_t bytes) const;

  uint64_t outstanding_bytes() const { return outstanding_; }
  uint64_t limit_bytes() const { return limit_; }

 private:
  uint64_t limit_;
  uint64_t outstanding_ = 0;
  std::deque<Announcement> announcements_;  // oldest first
};

}  // namespace stagio
