// The daemon's descriptor budget. Every connection, waiting for its Hello or served, holds a
// socket; so do the listeners, the Hello gate's and acceptor's pipes, and every file the
// clients have open. Linux starts processes with a soft RLIMIT_NOFILE of 1024 and a hard limit
// far above it, so at start the daemon raises the soft limit to the hard one when its caps
// need more; past the limit, accept fails and clients see their connect hang in the backlog.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iond/config.h"

namespace stagio {
namespace iond {

// Descriptors for files the clients hold open, the listeners, pipes and stdio, beyond the
// connections' sockets.
constexpr uint64_t kDescriptorReserve = 1024;

// What the configuration's caps can use: max_connections + max_unauthenticated + the reserve.
uint64_t DescriptorsNeeded(const IondConfig& config);

// Raises the soft RLIMIT_NOFILE to the hard limit if it is below `needed`. Returns the lines to
// log: that it raised it, or a warning that even the hard limit is below `needed` (the
// daemon runs anyway; the connection caps are then not reachable). Nothing when it is enough.
std::vector<std::string> RaiseDescriptorLimit(uint64_t needed);

}  // namespace iond
}  // namespace stagio
