#include "iond/wake_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stagio {
namespace iond {

Status WakePipe::Open(const std::string& user) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::IOError("pipe for " + user + ": " + std::strerror(errno));
  }
  read_ = net::UniqueFd(ends[0]);
  write_ = net::UniqueFd(ends[1]);
  return Status::OK();
}

void WakePipe::Wake() {
  const char byte = 1;
  ssize_t ignored = ::write(write_.get(), &byte, 1);
  (void)ignored;
}

void WakePipe::Drain() {
  char bytes[256];
  while (::read(read_.get(), bytes, sizeof(bytes)) > 0) {
  }
}

}  // namespace iond
}  // namespace stagio
