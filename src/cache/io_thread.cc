#include "cache/io_thread.h"

namespace stagio {

IoThread::IoThread(BlockCache* cache, WriteBackPolicy policy, int prefetch_workers)
    : cache_(cache), policy_(policy), thread_([this] { Run(); }) {
  for (int i = 1; i < prefetch_workers; ++i) {
    prefetch_workers_.emplace_back([this] { RunPrefetchWorker(); });
  }
}

IoThread::~IoThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  for (std::thread& worker : prefetch_workers_) worker.join();
}

void IoThread::SetPolicy(WriteBackPolicy policy) {
  std::lock_guard<std::mutex> lock(mutex_);
  policy_ = policy;
}

void IoThread::Notify() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (policy_.quiet_period().count() > 0) {
    last_write_ = std::chrono::steady_clock::now();
    if (!quiet_flush_pending_) {
      quiet_flush_pending_ = true;
      // All: the prefetch workers wait on the same condition, and one of them woken instead of
      // the write-back thread would go back to sleep with the request lost.
      wake_.notify_all();  // to start waiting for the quiet period
    }
  }
  if (!policy_.ShouldStart(cache_->dirty_bytes(), cache_->capacity())) return;
  write_back_requested_ = true;
  wake_.notify_all();  // as above: only the write-back thread acts on it
}

bool IoThread::Enqueue(const PrefetchJob& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!prefetches_.Push(job)) return false;
  // The main thread and the workers wait on one condition for different work; all look.
  wake_.notify_all();
  return true;
}

void IoThread::DropPrefetches(uint64_t file_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  prefetches_.DropFile(file_id);
  if (Idle()) idle_.notify_all();
}

void IoThread::WaitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return Idle(); });
}

void IoThread::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto has_work = [this] {
    return write_back_requested_ || !prefetches_.empty() || stopping_;
  };
  while (true) {
    bool quiet = false;
    if (quiet_flush_pending_ && !has_work()) {
      // Waits out the quiet period; a write meanwhile moves its end.
      const auto quiet_ends = [this] { return last_write_ + policy_.quiet_period(); };
      while (!has_work() && quiet_flush_pending_ &&
             wake_.wait_until(lock, quiet_ends()) != std::cv_status::timeout) {
      }
      quiet = !has_work() && quiet_flush_pending_ &&
              std::chrono::steady_clock::now() >= quiet_ends();
    } else {
      wake_.wait(lock, [&] { return has_work() || quiet_flush_pending_; });
    }
    if (stopping_) break;
    if (!quiet && !write_back_requested_ && !prefetches_.empty()) {
      RunOnePrefetch(lock);
      continue;
    }
    ++busy_;
    if (quiet) {
      quiet_flush_pending_ = false;
      lock.unlock();
      cache_->FlushOldestUntil(0);
      lock.lock();
    } else if (write_back_requested_) {
      write_back_requested_ = false;
      const WriteBackPolicy policy = policy_;
      lock.unlock();
      // Errors are recorded per file by the cache's backends and reported at that file's next
      // sync or close, so a failed pass just ends; the next Notify starts another.
      cache_->FlushOldestUntil(policy.LowMarkBytes(cache_->capacity()));
      lock.lock();
    }
    --busy_;
    if (Idle()) idle_.notify_all();
    wake_.notify_all();  // workers held back by the write-back pass
  }
}

void IoThread::RunPrefetchWorker() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] {
      return stopping_ || (!write_back_requested_ && !prefetches_.empty());
    });
    if (stopping_) break;
    RunOnePrefetch(lock);
  }
}

void IoThread::RunOnePrefetch(std::unique_lock<std::mutex>& lock) {
  const PrefetchJob job = *prefetches_.Pop();
  ++busy_;
  lock.unlock();
  // The outcome is counted by the cache; a failed prefetch is fetched again by the read that
  // needs it, which reports the error.
  cache_->PrefetchBlocks(job.file_id, job.block_index, job.block_count, job.epoch);
  lock.lock();
  --busy_;
  if (Idle()) idle_.notify_all();
}

}  // namespace stagio
