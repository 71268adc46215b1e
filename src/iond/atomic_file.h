// Writing a file that another process watches for (the ready file) or reads after the daemon
// exits (the stats file): it must never be seen half written.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "net/address.h"

namespace stagio {
namespace iond {

// Writes `content` to a temporary file next to `path`, then renames it over `path`.
Status WriteFileAtomically(const std::string& path, const std::string& content);

// The ready file's text: each bound address on its own line.
std::string ReadyFileText(const std::vector<net::Address>& addresses);

}  // namespace iond
}  // namespace stagio
