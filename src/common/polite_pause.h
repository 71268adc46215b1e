// PolitePause: the pause between two looks at something another thread or process will do
// soon (a collective completing, a node-mate's table being made), without spinning and
// without oversleeping.
//
// Spinning takes the core that the awaited rank or thread may need, on a node with more ranks
// than cores. Sleeping at once oversleeps: the shortest sleep lasts the timer slack, 50 µs on
// Linux, and open and close wait for several such things in a row. So a pause first yields the
// core, for kYieldFor in all, which lets any other runnable rank or thread have it as a sleep
// would, and sleeps only after, from `first_sleep` doubling up to `longest_sleep`. 64 yields
// alone were over in about 40 µs, and 1,000 opens and closes of small files at 2 ranks slept
// ~0.2 s longer than with this.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace stagio {

class PolitePause {
 public:
  static constexpr std::chrono::microseconds kYieldFor{250};

  PolitePause(std::chrono::microseconds first_sleep, std::chrono::microseconds longest_sleep)
      : stop_yielding_(std::chrono::steady_clock::now() + kYieldFor),
        sleep_(first_sleep),
        longest_sleep_(longest_sleep) {}

  void operator()() {
    if (std::chrono::steady_clock::now() < stop_yielding_) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, longest_sleep_);
  }

 private:
  std::chrono::steady_clock::time_point stop_yielding_;
  std::chrono::microseconds sleep_;
  std::chrono::microseconds longest_sleep_;
};

}  // namespace stagio
