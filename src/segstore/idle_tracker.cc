#include "segstore/idle_tracker.h"

#include <chrono>

namespace stagio {
namespace segstore {
namespace {

class SteadyClockImpl : public Clock {
 public:
  double Seconds() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock* SteadyClock() {
  static Clock* clock = new SteadyClockImpl;
  return clock;
}

IdleTracker::IdleTracker(Clock* clock) : clock_(clock), last_end_(clock->Seconds()) {}

void IdleTracker::Begin() {
  begun_.fetch_add(1);
  std::lock_guard<std::mutex> lock(mutex_);
  ++in_flight_;
}

void IdleTracker::End() {
  const double now = clock_->Seconds();
  std::lock_guard<std::mutex> lock(mutex_);
  --in_flight_;
  last_end_ = now;
}

bool IdleTracker::IdleFor(double seconds) const {
  const double now = clock_->Seconds();
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_ == 0 && now - last_end_ >= seconds;
}

}  // namespace segstore
}  // namespace stagio
