// RunOnThreads: the same work on several threads at once, the caller's among them, for the
// few places where stagio wants several storage requests in flight from one call (a flush of
// many blocks: a parallel file system serves many requests at once, and one after another
// leaves it idle for all but one request's latency).
//
// The work shares its items among the threads itself (a shared counter, or skipping what
// another thread has taken), so the threads share them however fast each goes, and fewer
// threads (one that could not be started) only mean more for the others.
#pragma once

#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace stagio {

// Calls work(i) for i in [0, threads) at once, i = 0 on the calling thread, and returns when
// all have returned. A thread that cannot be started is left out.
template <typename Work>
void RunOnThreads(size_t threads, Work work) {
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < threads; ++i) {
    try {
      helpers.emplace_back([&work, i] { work(i); });
    } catch (const std::system_error&) {
      break;
    }
  }
  work(0);
  for (std::thread& helper : helpers) helper.join();
}

}  // namespace stagio
