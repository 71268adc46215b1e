// IoThread: the rank's I/O thread. It does the work the application should not wait for:
// writing dirty blocks back, and fetching blocks ahead of use.
//
// Write-back: writers call Notify() after dirtying the cache; it is cheap and wakes the thread
// only when the policy says flushing should start. The thread then writes back
// least-recently-modified blocks until the policy says stop. If the policy has a quiet period,
// the thread also writes back everything once that long has passed since the last Notify().
//
// Prefetch: readers queue the blocks their prefetcher predicts (Enqueue), as runs of
// consecutive blocks. The thread fetches them one job at a time, oldest first, each run with
// one storage request, after any write-back pass that is due: dirty data holds memory that
// prefetching needs. Demand reads never go through this queue: a read that misses fetches on
// the application thread at once, so it never waits behind queued prefetches; if its block is
// already being prefetched, the cache makes it wait for that fetch instead.
//
// The thread calls no MPI, so it needs no MPI thread level.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cache/block_cache.h"
#include "cache/write_back_policy.h"
#include "prefetch/prefetch_queue.h"

namespace stagio {

class IoThread {
 public:
  IoThread(BlockCache* cache, WriteBackPolicy policy);
  ~IoThread();  // stops the thread; does not flush (callers flush first)
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  // Write-back.
  void Notify();
  void SetPolicy(WriteBackPolicy policy);

  // Prefetch. False if a job of the same file and first block was already queued.
  bool Enqueue(const PrefetchJob& job);
  // Forgets the file's queued prefetches (the cache's epoch makes any that already started
  // harmless).
  void DropPrefetches(uint64_t file_id);

  // Blocks until no write-back pass is running, no prefetch is queued and none is in flight
  // (tests use it to observe a settled cache).
  void WaitIdle();

 private:
  void Run();
  bool Idle() const {
    return !write_back_requested_ && !quiet_flush_pending_ && !busy_ && prefetches_.empty();
  }

  BlockCache* cache_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  WriteBackPolicy policy_;
  PrefetchQueue prefetches_;
  bool write_back_requested_ = false;
  bool quiet_flush_pending_ = false;  // writes came since the last quiet-period flush
  std::chrono::steady_clock::time_point last_write_;
  bool busy_ = false;  // a write-back pass or a prefetch is running
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace stagio
