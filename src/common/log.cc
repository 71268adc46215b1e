#include "common/log.h"

#include <cstdio>
#include <mutex>
#include <set>

namespace stagio {
namespace {

// The messages already printed. Warnings come from per-file paths (every open re-reads the hints),
// so without this a job opening thousands of files would repeat the same line thousands of times.
// Leaked on purpose: warnings may be issued from destructors running at exit.
struct WarnedMessages {
  std::mutex mutex;
  std::set<std::string> seen;
};

WarnedMessages& Warned() {
  static WarnedMessages* warned = new WarnedMessages;
  return *warned;
}

// One fputs per line so lines from several threads do not interleave mid-line.
void PrintLine(const std::string& line) {
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

void WarnOnce(bool speak, const std::string& message) {
  if (!speak) return;
  {
    WarnedMessages& warned = Warned();
    std::lock_guard<std::mutex> lock(warned.mutex);
    if (!warned.seen.insert(message).second) return;
  }
  PrintLine("stagio: warning: " + message + "\n");
}

void LogError(const std::string& message) { PrintLine("stagio: " + message + "\n"); }

}  // namespace stagio
