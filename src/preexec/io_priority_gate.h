// IoPriorityGate: the main thread's I/O goes first (PPIS, seed 003 section 3.2, Fig. 5).
//
// While the main thread is inside a stagio I/O call, pre-execution helpers start no storage
// request: a helper about to start one waits at the gate, and the main thread, when it leaves
// its call, opens the gate and wakes the helpers. Requests already under way when the main
// thread enters finish (a storage read cannot be taken back); the helper then waits before its
// next one. Without the gate (pp mode), helper and main thread compete for the device, and the
// main thread's reads get slower just when it needs them (seed 003, Fig. 1).
//
// Threading: Enter and Leave are the main thread's, and cost an atomic operation when no helper
// waits. A helper that passes the gate an instant before the main thread enters has its request
// in flight, as if it had started before.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace stagio {

class IoPriorityGate {
 public:
  // Main thread: a stagio I/O call begins or ends. Calls may nest (a close that flushes).
  void Enter() { inside_.fetch_add(1); }
  void Leave();

  // Helper: returns once the main thread is outside I/O, or `cancelled` (after Wake). True if
  // it had to wait.
  bool WaitForMainThread(const std::atomic<bool>& cancelled);
  // Wakes every waiting helper, to look at its `cancelled` flag again.
  void Wake();

  bool main_thread_inside() const { return inside_.load() > 0; }
  // Helpers waiting at the gate now (tests observe a helper held back with it).
  int waiting() const { return waiters_.load(); }

 private:
  std::atomic<int> inside_{0};
  std::atomic<int> waiters_{0};
  std::mutex mutex_;
  std::condition_variable opened_;
};

// The main thread inside one stagio I/O call, for a scope.
class MainThreadIo {
 public:
  explicit MainThreadIo(IoPriorityGate* gate) : gate_(gate) {
    if (gate_) gate_->Enter();
  }
  ~MainThreadIo() {
    if (gate_) gate_->Leave();
  }
  MainThreadIo(const MainThreadIo&) = delete;
  MainThreadIo& operator=(const MainThreadIo&) = delete;

 private:
  IoPriorityGate* gate_;
};

}  // namespace stagio
