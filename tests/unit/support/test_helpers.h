// Small helpers shared by the unit tests: a scoped background thread, polling for a state
// another thread reaches, known byte patterns, and gtest assertions on a stagio::Status.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"

// ASSERT_OK / EXPECT_OK: the expression's Status is OK; on failure the message is its
// ToString().
#define ASSERT_OK(expr)                              \
  do {                                               \
    const ::stagio::Status _status = (expr);         \
    ASSERT_TRUE(_status.ok()) << _status.ToString(); \
  } while (0)
#define EXPECT_OK(expr)                              \
  do {                                               \
    const ::stagio::Status _status = (expr);         \
    EXPECT_TRUE(_status.ok()) << _status.ToString(); \
  } while (0)

namespace stagio {
namespace test_support {

// Runs `body` on another thread; on scope exit (including a failed ASSERT) runs `cleanup`
// (which should release any gate the thread may be held at) and joins.
class Background {
 public:
  Background(std::function<void()> body, std::function<void()> cleanup)
      : cleanup_(std::move(cleanup)), thread_(std::move(body)) {}
  ~Background() { Join(); }
  void Join() {
    if (!thread_.joinable()) return;
    if (cleanup_) cleanup_();
    thread_.join();
  }

 private:
  std::function<void()> cleanup_;
  std::thread thread_;
};

// Polls `condition` until it holds; false if it still does not after `limit`. For states another
// thread reaches (a thread waiting at a gate, a counter): the limit only keeps a broken test
// from hanging, nothing depends on it for ordering.
inline bool WaitUntil(const std::function<bool()>& condition,
                      std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// `size` pseudo-random bytes, the same for the same `seed`.
inline std::vector<char> Pattern(uint64_t size, uint32_t seed) {
  std::vector<char> bytes(size);
  std::mt19937 rng(seed);
  for (auto& b : bytes) b = static_cast<char>(rng() & 0xff);
  return bytes;
}

// `length` bytes of `bytes` from `offset`, as a string (for comparisons that print readably).
inline std::string Str(const std::vector<char>& bytes, uint64_t offset, uint64_t length) {
  return std::string(bytes.data() + offset, length);
}

}  // namespace test_support
}  // namespace stagio
