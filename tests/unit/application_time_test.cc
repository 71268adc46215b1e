// The time the application leaves stagio between its calls, per byte moved
// (direct/application_time.h), with made-up clocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "direct/application_time.h"

namespace stagio {
namespace {

using Clock = ApplicationTime::Clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kMiB = 1 << 20;
const Clock::time_point kStart{};

// One call from `enter` to `leave` that moves `bytes`.
void Call(ApplicationTime& time, Clock::time_point enter, Clock::time_point leave,
          uint64_t bytes) {
  time.Enter(enter);
  time.Moved(bytes);
  time.Leave(leave);
}

TEST(ApplicationTimeTest, TimeBeforeTheFirstCallCountsAsOutside) {
  ApplicationTime time(kStart);
  EXPECT_EQ(time.OutsideSecondsPerByte(kMiB), 0);
  time.Enter(kStart + seconds(1));
  // The call about to be served counts among the bytes moved.
  EXPECT_DOUBLE_EQ(time.OutsideSecondsPerByte(kMiB), 1.0 / kMiB);
  EXPECT_DOUBLE_EQ(time.OutsideSecondsPerByte(0), 1.0);
}

TEST(ApplicationTimeTest, StartAtMovesTheStartOnlyBeforeAnyCall) {
  ApplicationTime time(kStart);
  time.StartAt(kStart + seconds(3));  // stagio's start-up took 3 s
  time.Enter(kStart + seconds(4));
  EXPECT_DOUBLE_EQ(time.OutsideSecondsPerByte(kMiB), 1.0 / kMiB);
  time.Leave(kStart + seconds(5));
  time.StartAt(kStart + seconds(6));  // too late: changes nothing
  time.Enter(kStart + seconds(7));
  EXPECT_DOUBLE_EQ(time.OutsideSecondsPerByte(kMiB), 3.0 / kMiB);
}

TEST(ApplicationTimeTest, TimeInsideCallsIsNotOutside) {
  ApplicationTime time(kStart);
  Call(time, kStart, kStart + seconds(5), kMiB);
  time.Enter(kStart + seconds(5) + milliseconds(1));
  // 1 ms outside over the first call's MiB and this one's.
  EXPECT_NEAR(time.OutsideSecondsPerByte(kMiB), 1e-3 / (2 * kMiB), 1e-15);
}

TEST(ApplicationTimeTest, NestedAndOverlappingCallsAreOneStretchInside) {
  ApplicationTime time(kStart);
  time.Enter(kStart);                  // a close
  time.Enter(kStart + seconds(1));     // that flushes, or another thread's call
  time.Leave(kStart + seconds(2));
  time.Leave(kStart + seconds(3));     // outside from here
  time.Enter(kStart + seconds(4));
  EXPECT_DOUBLE_EQ(time.OutsideSecondsPerByte(kMiB), 1.0 / kMiB);
  // A Leave with nothing entered changes nothing.
  ApplicationTime unbalanced(kStart);
  unbalanced.Leave(kStart + seconds(1));
  unbalanced.Enter(kStart + seconds(2));
  EXPECT_DOUBLE_EQ(unbalanced.OutsideSecondsPerByte(kMiB), 2.0 / kMiB);
}

// Back-to-back calls with microseconds between them: a compute phase long ago fades out.
TEST(ApplicationTimeTest, AnOldComputePhaseFadesOverLaterCalls) {
  ApplicationTime time(kStart);
  Clock::time_point now = kStart + seconds(1);
  for (int call = 0; call < 1000; ++call) {
    Call(time, now, now + milliseconds(4), 4 * kMiB);
    now += milliseconds(4) + microseconds(10);
  }
  time.Enter(now);
  EXPECT_LT(time.OutsideSecondsPerByte(4 * kMiB), 1e-10);
}

// A checkpoint: 16 writes back to back after each second of compute. Judged by the compute
// around the burst, not by the microseconds between its calls.
TEST(ApplicationTimeTest, ABurstBetweenComputePhasesKeepsTheComputeTime) {
  ApplicationTime time(kStart);
  Clock::time_point now = kStart;
  double lowest = 1;
  for (int step = 0; step < 10; ++step) {
    now += seconds(1);
    for (int call = 0; call < 16; ++call) {
      time.Enter(now);
      lowest = std::min(lowest, time.OutsideSecondsPerByte(4 * kMiB));
      time.Moved(4 * kMiB);
      now += milliseconds(4);
      time.Leave(now);
      now += microseconds(10);
    }
  }
  // About 13 ns per byte at its lowest, in the first burst: ten times the bound on fast
  // storage (1 ns per byte for such calls, direct_policy.h).
  EXPECT_GT(lowest, 10e-9);
}

}  // namespace
}  // namespace stagio
