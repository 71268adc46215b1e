#include "prefetch/access_history.h"

#include <algorithm>

namespace stagio {

AccessHistory::AccessHistory(size_t window) : window_(std::max(window, kMinWindow)) {}

void AccessHistory::Record(const Access& access) {
  accesses_.push_back(access);
  DropOldestBeyondWindow();
}

void AccessHistory::SetWindow(size_t window) {
  window_ = std::max(window, kMinWindow);
  DropOldestBeyondWindow();
}

void AccessHistory::DropOldestBeyondWindow() {
  while (accesses_.size() > window_) accesses_.pop_front();
}

}  // namespace stagio
