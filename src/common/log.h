// Logging: stagio speaks only to say something is wrong or to print the summary it was asked
// for. Every line starts with "stagio:" so users can tell it from their application's output.
#pragma once

#include <string>

namespace stagio {

// Prints "stagio: warning: <message>" to stderr once per distinct message per process, and only
// if `speak` is true (callers pass "I am rank 0 of the relevant communicator").
void WarnOnce(bool speak, const std::string& message);

// Prints "stagio: <message>" to stderr, always.
void LogError(const std::string& message);

}  // namespace stagio
