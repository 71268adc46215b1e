// ApplicationTime: how much time the application leaves stagio between its MPI-IO calls, per
// byte its data-access calls move. The direct path's decision (direct_policy.h) reads it.
//
// Write-back hides a write's storage time only in time the application spends outside stagio:
// computing, communicating, or in calls that are not MPI-IO. A job that writes large blocks back
// to back leaves none. Its writes then wait for the cache's water marks, and its close waits
// for the rest, so the cache adds a copy and its threads' work to what the job would have
// waited for anyway. Measured at 4 ranks on tmpfs, where four writers queued at the file's
// inode lock made storage look slow: such writes took 1.2-1.3 times plain MPI-IO's time through
// the cache, and the same time as plain going direct.
//
// The measure is time outside over bytes moved, over the recent calls (each call's weight fades
// by 1/kCallsRemembered per later call), so a burst of writes between long compute phases (a
// checkpoint) is judged by the compute around it, not by the instants between its calls. The
// time before the first call, from the end of MPI_Init on, counts as outside: a job that
// computes before its first checkpoint has time to drain it.
//
// Threading: any application thread may enter and leave; calls may nest (a close that flushes)
// and overlap (MPI_THREAD_MULTIPLE). Time is outside only while no thread is inside.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace stagio {

class ApplicationTime {
 public:
  using Clock = std::chrono::steady_clock;

  // How many recent calls the measure remembers (their weight falls by e after as many).
  static constexpr double kCallsRemembered = 64;

  // `start`: when the application began (MPI_Init), the first outside time's start.
  explicit ApplicationTime(Clock::time_point start);
  // Moves that start, before any call entered (stagio's own start-up is not the application's).
  void StartAt(Clock::time_point start);

  // An MPI-IO call of the application begins or ends.
  void Enter(Clock::time_point now);
  void Leave(Clock::time_point now);
  // A data-access call moved `bytes` (by any path).
  void Moved(uint64_t bytes);

  // Seconds the application spent outside stagio per byte moved, recently, counting a call of
  // `bytes` about to be served among the bytes moved.
  double OutsideSecondsPerByte(uint64_t bytes) const;

 private:
  mutable std::mutex mutex_;
  int inside_ = 0;
  Clock::time_point outside_since_;
  double outside_seconds_ = 0;  // faded sums
  double bytes_moved_ = 0;
};

// One call of the application inside stagio, for a scope. `time` may be null.
class ApplicationCall {
 public:
  explicit ApplicationCall(ApplicationTime* time) : time_(time) {
    if (time_) time_->Enter(ApplicationTime::Clock::now());
  }
  ~ApplicationCall() {
    if (time_) time_->Leave(ApplicationTime::Clock::now());
  }
  ApplicationCall(const ApplicationCall&) = delete;
  ApplicationCall& operator=(const ApplicationCall&) = delete;

 private:
  ApplicationTime* time_;
};

}  // namespace stagio
