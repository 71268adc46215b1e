#include "common/small_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace stagio {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string TooLarge(const std::string& path, size_t limit) {
  return path + " holds more than " + std::to_string(limit) + " bytes, which is not a settings file";
}

// Closes the descriptor whatever way the reading ends.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Status ReadSmallFile(const std::string& path, size_t limit, std::string* contents) {
  // O_NONBLOCK: opening a FIFO to read would otherwise wait for a writer.
  Descriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) return Status::IOError(path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) return Status::IOError(path + ": " + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) {
    return Status::InvalidArgument(path + " is " + KindOf(info.st_mode) + ", not a file");
  }
  if (static_cast<uint64_t>(info.st_size) > limit) {
    return Status::InvalidArgument(TooLarge(path, limit));
  }
  // The file may grow while it is read: read at most one byte past the limit to notice.
  std::string read;
  char chunk[4096];
  while (read.size() <= limit) {
    const size_t want = std::min(sizeof(chunk), limit + 1 - read.size());
    const ssize_t got = ::read(file.get(), chunk, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::IOError(path + ": " + std::strerror(errno));
    if (got == 0) break;
    read.append(chunk, static_cast<size_t>(got));
  }
  if (read.size() > limit) return Status::InvalidArgument(TooLarge(path, limit));
  *contents = std::move(read);
  return Status::OK();
}

}  // namespace stagio
