#include "preexec/main_thread_progress.h"

namespace stagio {

void MainThreadProgress::EndCall() {
  finished_.store(begun_.load());
  // A waiter increments waiters_ under the mutex before it checks finished_, so either it sees
  // the new value or this sees the waiter and notifies under the mutex (never lost).
  if (waiters_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    changed_.notify_all();
  }
}

void MainThreadProgress::MarkClosed() {
  std::lock_guard<std::mutex> open_lock(open_mutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  closed_.store(true);
  changed_.notify_all();
}

void MainThreadProgress::Wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  changed_.notify_all();
}

template <typename Done>
bool MainThreadProgress::WaitFor(Done done, const std::atomic<bool>& cancelled) {
  std::unique_lock<std::mutex> lock(mutex_);
  waiters_.fetch_add(1);
  changed_.wait(lock, [&] { return done() || closed_.load() || cancelled.load(); });
  waiters_.fetch_sub(1);
  return done();
}

bool MainThreadProgress::WaitUntilFinished(uint64_t sequence, const std::atomic<bool>& cancelled) {
  return WaitFor([&] { return finished_.load() >= sequence; }, cancelled);
}

bool MainThreadProgress::WaitUntilClosed(const std::atomic<bool>& cancelled) {
  return WaitFor([&] { return closed_.load(); }, cancelled);
}

}  // namespace stagio
