// WriteBackPolicy: when background write-back starts and when it stops (seed 004, V-C).
//
// Flushing starts when the dirty share of the cache reaches the high water mark and goes on
// until it falls to the low water mark. A high mark of 0% means "flush continuously"; 100%
// means "only when the cache is full of dirty data". Seed 004 found 6.25% best for the client
// cache; the low mark is ours (half of that), since the paper does not give one.
//
// The quiet period is ours too. The water marks leave up to the high mark of dirty data in the
// cache for the final sync or close to write, with the application waiting. When writes stop
// for a while (a compute phase), the device is idle anyway: after `quiet_ms` without a write,
// everything dirty is written back. A burst of small writes into the same blocks is not
// flushed piece by piece, because each write restarts the period. 0 turns it off.
#pragma once

#include <chrono>
#include <cstdint>

namespace stagio {

class WriteBackPolicy {
 public:
  WriteBackPolicy(double high_percent, double low_percent, double quiet_ms = 0);

  // True if `dirty_bytes` (more than none) out of `capacity_bytes` reaches the high water mark.
  bool ShouldStart(uint64_t dirty_bytes, uint64_t capacity_bytes) const;
  // True while flushing, once started, should go on.
  bool ShouldContinue(uint64_t dirty_bytes, uint64_t capacity_bytes) const;
  // The dirty bytes at which flushing stops: the low water mark in bytes.
  uint64_t LowMarkBytes(uint64_t capacity_bytes) const {
    return Threshold(low_percent_, capacity_bytes);
  }

  // After this long without a write, flush everything; zero: never.
  std::chrono::microseconds quiet_period() const { return quiet_period_; }
  double high_percent() const { return high_percent_; }
  double low_percent() const { return low_percent_; }

 private:
  static uint64_t Threshold(double percent, uint64_t capacity_bytes);

  double high_percent_;
  double low_percent_;
  std::chrono::microseconds quiet_period_;
};

}  // namespace stagio
