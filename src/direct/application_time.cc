#include "direct/application_time.h"

#include <algorithm>

namespace stagio {

ApplicationTime::ApplicationTime(Clock::time_point start) : outside_since_(start) {}

void ApplicationTime::StartAt(Clock::time_point start) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (inside_ == 0 && outside_seconds_ == 0) outside_since_ = start;
}

void ApplicationTime::Enter(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (inside_++ == 0 && now > outside_since_) {
    outside_seconds_ += std::chrono::duration<double>(now - outside_since_).count();
  }
}

void ApplicationTime::Leave(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (inside_ > 0 && --inside_ == 0) outside_since_ = now;
}

void ApplicationTime::Moved(uint64_t bytes) {
  constexpr double kKept = 1 - 1 / kCallsRemembered;
  std::lock_guard<std::mutex> lock(mutex_);
  outside_seconds_ *= kKept;
  bytes_moved_ = bytes_moved_ * kKept + static_cast<double>(bytes);
}

double ApplicationTime::OutsideSecondsPerByte(uint64_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return outside_seconds_ / std::max(1.0, bytes_moved_ + static_cast<double>(bytes));
}

}  // namespace stagio
