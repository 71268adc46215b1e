// AccessHistory: the window of recent reads that prefetch prediction looks at (seed 000, step A).
//
// One Access per read call, as the file byte range it touched. The window is bounded because
// the predictors only need the last few accesses to see a pattern, and a short window lets them
// notice quickly that the pattern changed; seed 000 keeps the 8 most recent (setting
// `stagio_history`). A window of 1 could not show even one offset delta, so it is at least 2.
// Longer memories (Markov transitions) are kept by the predictor that needs them.
//
// Not thread-safe: one history belongs to one file handle's access stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace stagio {

struct Access {
  uint64_t offset = 0;  // first byte in the file
  uint64_t length = 0;  // bytes

  uint64_t end() const { return offset + length; }
  bool operator==(const Access& other) const {
    return offset == other.offset && length == other.length;
  }
  bool operator!=(const Access& other) const { return !(*this == other); }
};

class AccessHistory {
 public:
  static constexpr size_t kDefaultWindow = 8;
  static constexpr size_t kMinWindow = 2;

  explicit AccessHistory(size_t window = kDefaultWindow);

  // Appends `access` as the newest, dropping the oldest if the window is full.
  void Record(const Access& access);
  void Clear() { accesses_.clear(); }
  // Changes the window (clamped to at least 2), dropping the oldest accesses that no longer fit.
  void SetWindow(size_t window);

  size_t window() const { return window_; }
  size_t size() const { return accesses_.size(); }
  bool empty() const { return accesses_.empty(); }
  // Oldest first: [0] is the oldest access kept, [size() - 1] the newest.
  const Access& operator[](size_t i) const { return accesses_[i]; }
  const Access& back() const { return accesses_.back(); }

 private:
  void DropOldestBeyondWindow();

  size_t window_;
  std::deque<Access> accesses_;
};

}  // namespace stagio
