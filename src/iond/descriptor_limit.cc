#include "iond/descriptor_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace stagio {
namespace iond {

uint64_t DescriptorsNeeded(const IondConfig& config) {
  return config.max_connections + config.max_unauthenticated + kDescriptorReserve;
}

std::vector<std::string> RaiseDescriptorLimit(uint64_t needed) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return {std::string("cannot read the descriptor limit: ") + std::strerror(errno)};
  }
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return {};
  std::vector<std::string> lines;
  const rlim_t before = limit.rlim_cur;
  // An unlimited hard limit cannot be the soft one for descriptors (the kernel caps them at
  // fs.nr_open): ask for what is needed then.
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? needed : limit.rlim_max;
  if (limit.rlim_cur > before) {
    if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      lines.push_back("raised the descriptor limit (RLIMIT_NOFILE) from " +
                      std::to_string(before) + " to " + std::to_string(limit.rlim_cur));
    } else {
      lines.push_back("cannot raise the descriptor limit from " + std::to_string(before) +
                      ": " + std::strerror(errno));
      limit.rlim_cur = before;
    }
  }
  if (limit.rlim_cur < needed) {
    lines.push_back("warning: the descriptor limit is " + std::to_string(limit.rlim_cur) +
                    " (hard limit " + std::to_string(limit.rlim_max) + "), below the " +
                    std::to_string(needed) +
                    " that max_connections, max_unauthenticated and open files may need; "
                    "connections past it fail to be accepted (raise ulimit -Hn, or lower "
                    "--max-connections)");
  }
  return lines;
}

}  // namespace iond
}  // namespace stagio
