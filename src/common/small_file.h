// ReadSmallFile: reads a settings file (a hints file, a token, a JSON config) that a user or a
// job script names, whatever it turns out to be.
//
// A path in a variable can name anything: a FIFO (opening it waits for a writer that may never
// come), /dev/zero or /dev/urandom (reading never ends, and memory grows until the node runs
// out), a directory, or a log file of gigabytes. Reading one of those must fail at once with a
// message that says what the path is, never hang or exhaust memory. So the file is opened
// without blocking, must be a regular file, and is read up to a limit.
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace stagio {

// Reads all of the regular file at `path` into *contents. Fails (InvalidArgument, or IOError
// for what the system refused) if it cannot be opened, is not a regular file, or holds more
// than `limit` bytes; the message starts with the path.
Status ReadSmallFile(const std::string& path, size_t limit, std::string* contents);

}  // namespace stagio
