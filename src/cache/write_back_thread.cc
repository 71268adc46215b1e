#include "cache/write_back_thread.h"

namespace stagio {

WriteBackThread::WriteBackThread(BlockCache* cache, WriteBackPolicy policy)
    : cache_(cache), policy_(policy), thread_([this] { Run(); }) {}

WriteBackThread::~WriteBackThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void WriteBackThread::SetPolicy(WriteBackPolicy policy) {
  std::lock_guard<std::mutex> lock(mutex_);
  policy_ = policy;
}

void WriteBackThread::Notify() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!policy_.ShouldStart(cache_->dirty_bytes(), cache_->capacity())) return;
  requested_ = true;
  wake_.notify_one();
}

void WriteBackThread::WaitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return !requested_ && !running_pass_; });
}

void WriteBackThread::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_) break;
    requested_ = false;
    running_pass_ = true;
    const WriteBackPolicy policy = policy_;
    lock.unlock();
    // Errors are recorded per file by the cache's backends and reported at that file's next
    // sync or close, so a failed pass just ends; the next Notify starts another.
    cache_->FlushOldestUntil(policy.LowMarkBytes(cache_->capacity()));
    lock.lock();
    running_pass_ = false;
    idle_.notify_all();
  }
}

}  // namespace stagio
