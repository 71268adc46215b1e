// RequestTimer takes off a request's time what its thread spent waiting for a core: with
// three busy threads pinned to the same core, most of a busy request's wall time is waiting,
// and the timer must not count it; small requests are left as wall time.
#include "storage/request_timer.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace stagio {
namespace {

void PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// Spins on this thread for `on_core` of its own CPU time.
void Spin(std::chrono::milliseconds on_core) {
  timespec start{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  while (true) {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    const double spent = static_cast<double>(now.tv_sec - start.tv_sec) +
                         static_cast<double>(now.tv_nsec - start.tv_nsec) * 1e-9;
    if (spent * 1000 >= static_cast<double>(on_core.count())) return;
  }
}

TEST(RequestTimerTest, TakesOffTheTimeTheThreadWaitedForACore) {
  if (ThreadRunDelayNanoseconds() < 0) GTEST_SKIP() << "no /proc/thread-self/schedstat here";
  cpu_set_t original;
  pthread_getaffinity_np(pthread_self(), sizeof(original), &original);
  PinToCpu(0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> rivals;
  for (int i = 0; i < 3; ++i) {
    rivals.emplace_back([&stop] {
      PinToCpu(0);
      while (!stop.load()) {
      }
    });
  }
  const RequestTimer timer(RequestTimer::kMinCorrectedBytes);
  const RequestTimer small(RequestTimer::kMinCorrectedBytes - 1);
  const auto start = std::chrono::steady_clock::now();
  Spin(std::chrono::milliseconds(40));
  const double corrected = timer.Seconds();
  const double uncorrected = small.Seconds();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop.store(true);
  for (std::thread& rival : rivals) rival.join();
  pthread_setaffinity_np(pthread_self(), sizeof(original), &original);

  // Four threads on one core: the request had about a quarter of it.
  ASSERT_GT(wall, 0.08) << "the rivals did not share the core";
  EXPECT_LT(corrected, 0.75 * wall);
  EXPECT_GE(corrected, 0.035);  // at least its own time on the core, less clock slop
  EXPECT_GE(uncorrected, wall * 0.99);
}

}  // namespace
}  // namespace stagio
