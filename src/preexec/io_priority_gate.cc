#include "preexec/io_priority_gate.h"

namespace stagio {

void IoPriorityGate::Leave() {
  // A waiter registers under the mutex before it looks at inside_, so either it sees the gate
  // open or this sees it waiting and notifies under the mutex.
  if (inside_.fetch_sub(1) == 1 && waiters_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    opened_.notify_all();
  }
}

bool IoPriorityGate::WaitForMainThread(const std::atomic<bool>& cancelled) {
  if (inside_.load() == 0) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  waiters_.fetch_add(1);
  opened_.wait(lock, [&] { return inside_.load() == 0 || cancelled.load(); });
  waiters_.fetch_sub(1);
  return true;
}

void IoPriorityGate::Wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  opened_.notify_all();
}

}  // namespace stagio
