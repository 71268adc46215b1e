// RequestTimer: how long a storage request took, less the time its thread waited for a core.
//
// The direct path compares storage's speed with a copy's on a core of its own
// (direct/direct_policy.h). Wall time alone says more about the machine than about storage
// where ranks outnumber cores: with 4 ranks on 2 cores, a 4 MiB write to tmpfs, all of it
// the kernel copying on the caller's core, took 1-2 ns per byte while the rank waited its
// turn, and a third of a streaming write went through the cache for it. Linux counts, per
// thread, the time spent runnable but not running (the run delay in /proc/thread-self/
// schedstat); the timer takes off what that grew by during the request. Where the count
// cannot be read, it is wall time.
//
// Reading the count costs about a microsecond, so only requests of at least
// kMinCorrectedBytes are corrected: a request smaller than that is summed with others into a
// sample (StorageSpeed), and a microsecond twice per call would be a good part of what a small
// request on fast storage takes.
#pragma once

#include <chrono>
#include <cstdint>

namespace stagio {

class RequestTimer {
 public:
  static constexpr uint64_t kMinCorrectedBytes = 256 * 1024;

  // Starts timing a request of `bytes`.
  explicit RequestTimer(uint64_t bytes);
  // Seconds since the start, less the run delay since then (for a request of at least
  // kMinCorrectedBytes). Call on the thread that started it.
  double Seconds() const;

 private:
  std::chrono::steady_clock::time_point start_;
  int64_t run_delay_ns_ = -1;  // at the start; -1 if not corrected
};

// This thread's run delay so far, in ns (-1 if it cannot be read).
int64_t ThreadRunDelayNanoseconds();

}  // namespace stagio
