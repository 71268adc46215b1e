#include "iond/throttled_log.h"

#include <algorithm>
#include <utility>

namespace stagio {
namespace iond {

ThrottledLog::ThrottledLog(LogSink sink, size_t lines_per_window, Clock::duration window)
    : sink_(std::move(sink)), lines_per_window_(lines_per_window), window_(window) {}

void ThrottledLog::Log(const EventKind& kind, const std::string& line, Clock::time_point now) {
  bool write = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = windows_.find(kind.verb + " " + kind.events);
    if (found != windows_.end() && now - found->second.start >= window_) {
      Summarize(found->second, now);
      windows_.erase(found);
      found = windows_.end();
    }
    if (found == windows_.end()) {
      found = windows_.emplace(kind.verb + " " + kind.events, Window{kind, now}).first;
    }
    Window& window = found->second;
    write = window.logged < lines_per_window_;
    ++(write ? window.logged : window.suppressed);
  }
  // Outside the lock: the sink may be slow (a terminal), and other kinds need not wait.
  if (write) sink_(line);
}

void ThrottledLog::Flush(Clock::time_point now, bool everything) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = windows_.begin(); it != windows_.end();) {
    if (everything || now - it->second.start >= window_) {
      Summarize(it->second, now);
      it = windows_.erase(it);
    } else {
      ++it;
    }
  }
}

void ThrottledLog::Summarize(const Window& window, Clock::time_point now) {
  if (window.suppressed == 0) return;
  const auto seconds = std::max<int64_t>(
      1, std::chrono::ceil<std::chrono::seconds>(now - window.start).count());
  sink_(window.kind.verb + " " + std::to_string(window.suppressed) + " more " +
        window.kind.events + " in the last " + std::to_string(seconds) + " s (only the first " +
        std::to_string(lines_per_window_) + " of each " +
        std::to_string(std::chrono::ceil<std::chrono::seconds>(window_).count()) +
        " s are logged one by one)");
}

}  // namespace iond
}  // namespace stagio
