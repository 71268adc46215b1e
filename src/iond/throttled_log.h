// ThrottledLog: log lines about events that anyone who can reach a listener can cause, as often
// as they like: connections that never say Hello, evictions, refusals and protocol errors
// before Hello. One line per event would let a flood fill the disk with the daemon's log, so
// per kind of event the first few of each window (a minute) get their own line and the rest are
// counted; when the window ends, one line says how many were not shown:
//
//   closed 517 more connections that did not say Hello within 10 s in the last 60 s (only
//   the first 10 of each minute are logged one by one)
//
// Thread-safe. Time is passed in, so tests drive the clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "iond/log.h"

namespace stagio {
namespace iond {

// A kind of event, as its summary line names it: "<verb> N more <events> in the last ...".
struct EventKind {
  std::string verb;    // "closed"
  std::string events;  // "connections that did not say Hello within 10 s"
};

class ThrottledLog {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ThrottledLog(LogSink sink, size_t lines_per_window = 10,
                        Clock::duration window = std::chrono::minutes(1));

  // One event of `kind`; `line` is its own log line, written if the window has room.
  void Log(const EventKind& kind, const std::string& line, Clock::time_point now);
  // Writes the summary of every window that has ended, or with `everything` of every window
  // (at shutdown: the counts are not lost).
  void Flush(Clock::time_point now, bool everything = false);

 private:
  struct Window {
    EventKind kind;
    Clock::time_point start;
    uint64_t logged = 0;
    uint64_t suppressed = 0;
  };
  void Summarize(const Window& window, Clock::time_point now);

  const LogSink sink_;
  const size_t lines_per_window_;
  const Clock::duration window_;
  std::mutex mutex_;
  std::map<std::string, Window> windows_;  // by verb and events
};

}  // namespace iond
}  // namespace stagio
