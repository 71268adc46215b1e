// MainThreadProgress: how far the main thread has got in its calls on one file, as a
// pre-execution helper needs to know it.
//
// The main thread's data-access, sync and set_size calls on a file are numbered 1, 2, 3, ... as
// they begin. The helper's prefetch calls for the file are numbered the same way (HelperSequence),
// so the helper's call k stands for the main thread's call k. From these numbers the helper sees
// whether it has fallen behind (the main thread has begun call k: too late to prefetch for it),
// and it can wait until the main thread has finished a call (a write its read depends on, a sync
// point).
//
// Threading: BeginCall, EndCall and MarkClosed are the main thread's (the thread that makes the
// file's MPI-IO calls); everything else is for helper threads. The main thread never waits on a
// helper: its side is an atomic store, plus a notify when a helper is waiting.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace stagio {

class MainThreadProgress {
 public:
  // Main thread.
  // Returns the number of the call that begins.
  uint64_t BeginCall() { return begun_.fetch_add(1) + 1; }
  // The call begun last has finished; wakes helpers that wait for it.
  void EndCall();
  // The file is closed: every wait returns, and the helper drops its calls for the file.
  void MarkClosed();

  // Helpers.
  uint64_t begun() const { return begun_.load(); }
  uint64_t finished() const { return finished_.load(); }
  bool closed() const { return closed_.load(); }
  // Waits until call `sequence` has finished; returns false instead if the file was closed or
  // `cancelled` became true (and Wake was called) first.
  bool WaitUntilFinished(uint64_t sequence, const std::atomic<bool>& cancelled);
  // Waits until the file is closed or `cancelled`; true if it was closed.
  bool WaitUntilClosed(const std::atomic<bool>& cancelled);
  // Wakes every waiter, to look at its `cancelled` flag again.
  void Wake();
  // Runs `work` unless the file is closed, and holds MarkClosed off until it returns: for a
  // helper's work that uses what close frees (the file's communicator). True if it ran.
  template <typename Work>
  bool RunWhileOpen(Work work) {
    std::lock_guard<std::mutex> lock(open_mutex_);
    if (closed_.load()) return false;
    work();
    return true;
  }

 private:
  template <typename Done>
  bool WaitFor(Done done, const std::atomic<bool>& cancelled);

  std::atomic<uint64_t> begun_{0};
  std::atomic<uint64_t> finished_{0};
  std::atomic<bool> closed_{false};
  std::atomic<int> waiters_{0};
  std::mutex open_mutex_;  // RunWhileOpen against MarkClosed
  std::mutex mutex_;
  std::condition_variable changed_;
};

// One numbered call of the main thread, for a scope.
class SequencedCall {
 public:
  explicit SequencedCall(MainThreadProgress& progress) : progress_(progress) {
    progress_.BeginCall();
  }
  ~SequencedCall() { progress_.EndCall(); }
  SequencedCall(const SequencedCall&) = delete;
  SequencedCall& operator=(const SequencedCall&) = delete;

 private:
  MainThreadProgress& progress_;
};

}  // namespace stagio
