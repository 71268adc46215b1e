// Where the daemon's log lines go. The server takes a sink so that tests can read what it
// logged; the executable writes to stderr.
#pragma once

#include <functional>
#include <string>

namespace stagio {
namespace iond {

// Receives one line, without the "stagio-iond: " prefix and without a newline.
using LogSink = std::function<void(const std::string& line)>;

// Writes "stagio-iond: <line>\n" to stderr in one write, so that lines of different threads
// never interleave.
void LogToStderr(const std::string& line);

}  // namespace iond
}  // namespace stagio
