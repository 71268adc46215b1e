#include "iond/root_guard.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace stagio {
namespace iond {
namespace {

// True if a component of `path` is "..": where such a path leads is known only once it resolves.
bool HasParentComponent(const std::string& path) {
  return path == ".." || path.rfind("../", 0) == 0 || path.find("/../") != std::string::npos ||
         (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0);
}

// realpath(3) into a string; false with errno set if it fails.
bool CanonicalPath(const std::string& path, std::string* canonical) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return false;
  *canonical = resolved;
  std::free(resolved);
  return true;
}

}  // namespace

bool IsInside(const std::string& root, const std::string& path) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

Status RootGuard::Create(const std::string& root, RootGuard* guard) {
  std::string canonical;
  if (root.empty()) return Status::InvalidArgument("root directory: no path given");
  if (!CanonicalPath(root, &canonical)) {
    return Status::InvalidArgument("root directory " + root + ": " + std::strerror(errno));
  }
  struct stat info {};
  if (::stat(canonical.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Status::InvalidArgument("root directory " + root + ": not a directory");
  }
  guard->root_ = canonical;
  return Status::OK();
}

Status RootGuard::Resolve(const std::string& path, std::string* resolved) const {
  if (path.empty() || path[0] != '/') {
    return Status::InvalidArgument("path '" + path + "' is not absolute");
  }
  std::string canonical;
  if (!CanonicalPath(path, &canonical)) {
    const int error = errno;
    // Saying whether a path outside the root exists would let clients probe the file system.
    if (!IsInside(root_, path) || HasParentComponent(path)) {
      return Status::InvalidArgument(path + " is outside the daemon's root " + root_);
    }
    if (error == ENOENT) {
      return Status::NotFound(path + ": no such file (the daemon opens existing files only)");
    }
    return Status::IOError(path + ": " + std::strerror(error));
  }
  if (!IsInside(root_, canonical)) {
    return Status::InvalidArgument(path + " is outside the daemon's root " + root_);
  }
  struct stat info {};
  if (::stat(canonical.c_str(), &info) != 0) {
    return Status::IOError(path + ": " + std::strerror(errno));
  }
  // A FIFO or device would block or misbehave under positioned I/O; MPI files are regular.
  if (!S_ISREG(info.st_mode)) return Status::InvalidArgument(path + " is not a regular file");
  *resolved = canonical;
  return Status::OK();
}

}  // namespace iond
}  // namespace stagio
