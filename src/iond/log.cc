#include "iond/log.h"

#include <unistd.h>

namespace stagio {
namespace iond {

void LogToStderr(const std::string& line) {
  const std::string text = "stagio-iond: " + line + "\n";
  // One write call per line; a short write to a pipe or terminal is not worth retrying for a
  // log line, and stdio buffering would split lines across threads.
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace iond
}  // namespace stagio
