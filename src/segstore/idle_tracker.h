// IdleTracker: whether storage has been left alone long enough for the store's own work
// (seed 002 §3.5.3: grouping runs only in idle periods, found by checking once per second
// that nothing was queued for five seconds). Demand requests, every storage request that the
// daemon's clients cause, enter and leave it; the grouping watches the count of requests begun
// and yields the moment it moves. Time comes from a Clock, so tests can move it by hand.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace stagio {
namespace segstore {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double Seconds() = 0;  // any origin; only differences matter
};
// std::chrono::steady_clock's time. Never null.
Clock* SteadyClock();

class IdleTracker {
 public:
  explicit IdleTracker(Clock* clock);

  void Begin();
  void End();
  // A demand request for the length of a scope.
  class Scope {
   public:
    explicit Scope(IdleTracker* tracker) : tracker_(tracker) { tracker_->Begin(); }
    ~Scope() { tracker_->End(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    IdleTracker* tracker_;
  };

  // Requests begun so far.
  uint64_t begun() const { return begun_.load(); }
  // No request in flight, and none for `seconds` (since the tracker was made, at first).
  bool IdleFor(double seconds) const;
  Clock* clock() const { return clock_; }

 private:
  Clock* const clock_;
  std::atomic<uint64_t> begun_{0};
  mutable std::mutex mutex_;
  uint64_t in_flight_ = 0;
  double last_end_ = 0;
};

}  // namespace segstore
}  // namespace stagio
