#include "cache/write_back_policy.h"

#include <algorithm>

namespace stagio {

WriteBackPolicy::WriteBackPolicy(double high_percent, double low_percent, double quiet_ms)
    : high_percent_(std::clamp(high_percent, 0.0, 100.0)),
      low_percent_(std::clamp(low_percent, 0.0, high_percent_)),
      quiet_period_(static_cast<int64_t>(std::max(quiet_ms, 0.0) * 1000.0)) {}

uint64_t WriteBackPolicy::Threshold(double percent, uint64_t capacity_bytes) {
  return static_cast<uint64_t>(static_cast<double>(capacity_bytes) * percent / 100.0);
}

bool WriteBackPolicy::ShouldStart(uint64_t dirty_bytes, uint64_t capacity_bytes) const {
  // Reaching the mark is enough, so that 100% means "when the cache is full of dirty data".
  return dirty_bytes > 0 && dirty_bytes >= Threshold(high_percent_, capacity_bytes);
}

bool WriteBackPolicy::ShouldContinue(uint64_t dirty_bytes, uint64_t capacity_bytes) const {
  return dirty_bytes > Threshold(low_percent_, capacity_bytes);
}

}  // namespace stagio
