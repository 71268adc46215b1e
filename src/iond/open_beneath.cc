#include "iond/open_beneath.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

// Headers older than the kernel that runs the daemon: the ABI is fixed.
#ifndef RESOLVE_BENEATH
struct open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace stagio {
namespace iond {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's own limit
constexpr int kAlwaysFlags = O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
// openat2 fails with EAGAIN when a rename raced with a `..` it resolved; it is safe to retry.
constexpr int kRaceRetries = 64;

// The components of a relative path, without empty ones and "."; ".." is kept.
std::deque<std::string> Components(const std::string& path) {
  std::deque<std::string> components;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string component = path.substr(start, end - start);
    if (!component.empty() && component != ".") components.push_back(std::move(component));
    start = end + 1;
  }
  return components;
}

Status Failure(int error, int* error_number) {
  *error_number = error;
  if (error == EXDEV) return Status::InvalidArgument("escapes the directory");
  if (error == ENOENT) return Status::NotFound(std::strerror(error));
  return Status::IOError(std::strerror(error));
}

int OpenAt2(int directory, const char* relative, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, directory, relative, &how, sizeof(how)));
}

bool Unsupported(int error) { return error == ENOSYS || error == E2BIG || error == EPERM; }

Status OpenWithKernel(int directory, const std::string& relative, int flags,
                      net::UniqueFd* file, int* error_number) {
  std::string path;
  for (const std::string& component : Components(relative)) {
    path += (path.empty() ? "" : "/") + component;
  }
  if (path.empty()) path = ".";
  for (int attempt = 0;; ++attempt) {
    const int fd = OpenAt2(directory, path.c_str(), flags);
    if (fd >= 0) {
      *file = net::UniqueFd(fd);
      return Status::OK();
    }
    const int error = errno;
    if (error == EINTR || (error == EAGAIN && attempt < kRaceRetries)) continue;
    if (Unsupported(error)) {
      *error_number = error;
      return Status::NotSupported("openat2 is not available");
    }
    return Failure(error, error_number);
  }
}

Status OpenByWalking(int directory, const std::string& relative, int flags,
                     net::UniqueFd* file, int* error_number) {
  // The directories walked into, deepest last; `..` pops one, and never below the start.
  std::vector<net::UniqueFd> walked;
  auto current = [&] { return walked.empty() ? directory : walked.back().get(); };
  std::deque<std::string> todo = Components(relative);
  int links = 0;
  while (!todo.empty()) {
    const std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == "..") {
      if (walked.empty()) return Failure(EXDEV, error_number);
      walked.pop_back();
      continue;
    }
    net::UniqueFd entry(::openat(current(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!entry.valid()) return Failure(errno, error_number);
    struct stat info {};
    if (::fstat(entry.get(), &info) != 0) return Failure(errno, error_number);
    if (S_ISLNK(info.st_mode)) {
      if (++links > kMaxLinks) return Failure(ELOOP, error_number);
      std::string target(PATH_MAX, '\0');
      const ssize_t length = ::readlinkat(entry.get(), "", target.data(), target.size());
      if (length < 0) return Failure(errno, error_number);
      target.resize(static_cast<size_t>(length));
      if (target.empty() || target[0] == '/') return Failure(EXDEV, error_number);
      const std::deque<std::string> parts = Components(target);
      todo.insert(todo.begin(), parts.begin(), parts.end());
      continue;
    }
    if (!todo.empty()) {
      if (!S_ISDIR(info.st_mode)) return Failure(ENOTDIR, error_number);
      walked.push_back(std::move(entry));
      continue;
    }
    // The last component, opened for I/O by name in the directory held. If it became a link
    // since it was looked at, O_NOFOLLOW refuses it, and it is resolved as a link again.
    const int fd = ::openat(current(), name.c_str(), flags | O_NOFOLLOW | kAlwaysFlags);
    if (fd < 0 && errno == ELOOP && ++links <= kMaxLinks) {
      todo.push_front(name);
      continue;
    }
    if (fd < 0) return Failure(errno, error_number);
    *file = net::UniqueFd(fd);
    return Status::OK();
  }
  // The path ends in a directory (or is empty): open that directory itself.
  const int fd = ::openat(current(), ".", flags | kAlwaysFlags);
  if (fd < 0) return Failure(errno, error_number);
  *file = net::UniqueFd(fd);
  return Status::OK();
}

}  // namespace

bool KernelOpensBeneath() {
  static const bool supported = [] {
    const int fd = OpenAt2(AT_FDCWD, ".", O_PATH | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  }();
  return supported;
}

Status OpenBeneath(int directory, const std::string& relative, int flags, BeneathMethod method,
                   net::UniqueFd* file, int* error_number) {
  *error_number = 0;
  if (method != BeneathMethod::kWalk && (method == BeneathMethod::kKernel || KernelOpensBeneath())) {
    Status status = OpenWithKernel(directory, relative, flags | kAlwaysFlags, file, error_number);
    // A seccomp filter may refuse openat2 where the probe did not run into it.
    if (method == BeneathMethod::kKernel || status.code() != Status::Code::kNotSupported) {
      return status;
    }
  }
  return OpenByWalking(directory, relative, flags, file, error_number);
}

}  // namespace iond
}  // namespace stagio
