#include "iond/root_guard.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace stagio {
namespace iond {
namespace {

// realpath(3) into a string; false with errno set if it fails.
bool CanonicalPath(const std::string& path, std::string* canonical) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return false;
  *canonical = resolved;
  std::free(resolved);
  return true;
}

// `path` with "//" and "/./" folded, for the lexical check; ".." stays for OpenBeneath.
std::string WithoutEmptyComponents(const std::string& path) {
  std::string folded = "/";
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string component = path.substr(start, end - start);
    if (!component.empty() && component != ".") {
      folded += (folded.size() > 1 ? "/" : "") + component;
    }
    start = end + 1;
  }
  return folded;
}

Status Outside(const std::string& path, const std::string& root) {
  return Status::InvalidArgument(path + " is outside the daemon's root " + root);
}

}  // namespace

bool IsInside(const std::string& root, const std::string& path) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

Status RootGuard::Create(const std::string& root, RootGuard* guard, BeneathMethod method) {
  std::string canonical;
  if (root.empty()) return Status::InvalidArgument("root directory: no path given");
  if (!CanonicalPath(root, &canonical)) {
    return Status::InvalidArgument("root directory " + root + ": " + std::strerror(errno));
  }
  net::UniqueFd fd(::open(canonical.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::InvalidArgument("root directory " + root + ": " +
                                   (errno == ENOTDIR ? "not a directory" : std::strerror(errno)));
  }
  guard->root_ = canonical;
  guard->root_fd_ = std::move(fd);
  guard->method_ = method;
  return Status::OK();
}

Status RootGuard::Open(const std::string& path, OpenedFile* file) const {
  if (path.empty() || path[0] != '/') {
    return Status::InvalidArgument("path '" + path + "' is not absolute");
  }
  const std::string folded = WithoutEmptyComponents(path);
  if (!IsInside(root_, folded)) return Outside(path, root_);
  const std::string relative = folded.substr(root_ == "/" ? 1 : root_.size());
  // Read-write if the daemon may; a file it may only read can still be served to readers.
  net::UniqueFd fd;
  int error = 0;
  bool writable = true;
  Status status = OpenBeneath(root_fd_.get(), relative, O_RDWR, method_, &fd, &error);
  if (!status.ok() && (error == EACCES || error == EROFS || error == ETXTBSY)) {
    writable = false;
    status = OpenBeneath(root_fd_.get(), relative, O_RDONLY, method_, &fd, &error);
  }
  if (error == EXDEV) return Outside(path, root_);
  if (error == EISDIR) return Status::InvalidArgument(path + " is not a regular file");
  if (status.code() == Status::Code::kNotFound) {
    return Status::NotFound(path + ": no such file (the daemon opens existing files only)");
  }
  if (!status.ok()) return Status::IOError(path + ": " + status.message());
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return Status::IOError(path + ": " + std::strerror(errno));
  // A FIFO or device would block or misbehave under positioned I/O; MPI files are regular.
  if (!S_ISREG(info.st_mode)) return Status::InvalidArgument(path + " is not a regular file");
  // Opened without blocking (a FIFO must not hang the daemon); file I/O blocks as usual.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  file->fd = std::move(fd);
  file->writable = writable;
  file->device = info.st_dev;
  file->inode = info.st_ino;
  file->path = folded;
  return Status::OK();
}

}  // namespace iond
}  // namespace stagio
