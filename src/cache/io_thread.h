// IoThread: the rank's I/O thread. It does the work the application should not wait for:
// writing dirty blocks back, and fetching blocks ahead of use.
//
// Write-back: writers call Notify() after dirtying the cache; it is cheap and wakes the thread
// only when the policy says flushing should start. The thread then writes back
// least-recently-modified blocks until the policy says stop. If the policy has a quiet period,
// the thread also writes back everything once that long has passed since the last Notify().
//
// Prefetch: readers queue the blocks their prefetcher predicts (Enqueue), as runs of
// consecutive blocks. The thread fetches them oldest first, each run with one storage request,
// after any write-back pass that is due: dirty data holds memory that prefetching needs.
// `prefetch_workers - 1` helper threads take prefetch jobs too, so that several are in flight:
// parallel file systems serve many requests at once, and an aggregator of the collective cache
// prefetches for many ranks, which one request at a time could not keep up with. Demand reads never go through this queue: a read that misses fetches on
// the application thread at once, so it never waits behind queued prefetches; if its block is
// already being prefetched, the cache makes it wait for that fetch instead.
//
// The thread calls no MPI, so it needs no MPI thread level.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "cache/block_cache.h"
#include "cache/write_back_policy.h"
#include "cache/prefetch_queue.h"

namespace stagio {

class IoThread {
 public:
  // `prefetch_workers` (at least 1): how many prefetch jobs may be in flight at once.
  IoThread(BlockCache* cache, WriteBackPolicy policy, int prefetch_workers = 1);
  ~IoThread();  // stops the threads; does not flush (callers flush first)
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
  // The loop of the helper threads: prefetch jobs only.
  void RunPrefetchWorker();
  // Pops one prefetch job and runs it with the lock released. Requires a queued job.
  void RunOnePrefetch(std::unique_lock<std::mutex>& lock);
  bool Idle() const {
    return !write_back_requested_ && !quiet_flush_pending_ && busy_ == 0 && prefetches_.empty();
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
  int busy_ = 0;  // write-back passes and prefetches running
  bool stopping_ = false;
  std::thread thread_;
  std::vector<std::thread> prefetch_workers_;
};

}  // namespace stagio
