// RootGuard: confines the files the daemon serves to one directory tree.
//
// Trust model. stagio-iond opens files with its own user's rights, for any client that can
// reach one of its sockets and, if a token is configured, presents it. It cannot tell who the
// client is, so it cannot apply the client's permissions: a client can read and write every
// file under --root that the daemon's user can, whether or not the client's user could. What
// the daemon guarantees instead is the boundary: it serves only regular files beneath the root.
// So: run the daemon as the job's user, give it a root that holds only the job's files (not a
// home directory), and remember who can reach it. A TCP listener off loopback needs the token;
// a loopback listener or a UNIX socket is reachable by every local user unless the token is
// set (or the socket lies in a directory only the job's user can enter).
//
// How the boundary holds. The root is opened once, and every client's path is opened relative
// to that descriptor by OpenBeneath (open_beneath.h), never resolved first and opened by name
// after: a client that swaps a component for a symbolic link while the daemon opens the file
// (it can, if it can create entries under the root) cannot make it leave the root. Symbolic
// links beneath the root are followed while they stay beneath it (relative targets); absolute
// targets and `..` above the root are refused.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"
#include "iond/open_beneath.h"
#include "net/socket.h"

namespace stagio {
namespace iond {

// A client's file, opened beneath the root.
struct OpenedFile {
  net::UniqueFd fd;
  bool writable = false;  // opened read-write; else read-only, as the daemon may only read it
  dev_t device = 0;       // the file's identity: every name of one file gives the same
  ino_t inode = 0;
  std::string path;       // the client's path, for messages
};

class RootGuard {
 public:
  // Opens `root` (it must be an existing directory). `method` chooses how paths are opened
  // beneath it; tests force the walk that kernels without openat2 get.
  static Status Create(const std::string& root, RootGuard* guard,
                       BeneathMethod method = BeneathMethod::kAuto);

  // Opens a client's `path`: absolute, lexically inside the root (the client sends it
  // resolved), and naming a regular file beneath the root once opened. Read-write if the
  // daemon may write the file, else read-only. A path outside the root, or one that would
  // leave it through a link or `..`, is refused with the same message whether it exists or
  // not, so clients cannot probe the file system.
  Status Open(const std::string& path, OpenedFile* file) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;  // canonical, without a trailing slash except for "/"
  net::UniqueFd root_fd_;
  BeneathMethod method_ = BeneathMethod::kAuto;
};

// True if `path` is `root` or below it by whole components ("/data2" is not inside "/data").
// Both must be canonical.
bool IsInside(const std::string& root, const std::string& path);

}  // namespace iond
}  // namespace stagio
