// RootGuard: confines the files the daemon serves to one directory tree.
//
// Trust model. stagio-iond opens files with its own user's rights, for any client that can
// reach one of its sockets and, if a token is configured, presents it. It cannot tell who the
// client is, so it cannot apply the client's permissions: a client can read and write every
// file under --root that the daemon's user can, whether or not the client's user could. What
// the daemon guarantees instead is the boundary: it serves only existing regular files below
// the root, and only paths that resolve (symlinks and `..` followed) to a place under the root
// by whole path components. So: run the daemon as the job's user, give it a root that holds only
// the job's files (not a home directory), and remember who can reach it. A TCP listener off
// loopback needs the token; a loopback listener or a UNIX socket is reachable by every local
// user unless the token is set (or the socket lies in a directory only the job's user can
// enter). A local user who can create symlinks under the root while the daemon opens a file can
// race the check (the path is resolved and checked, then opened): keep the root writable only
// by the job.
#pragma once

#include <string>

#include "common/status.h"

namespace stagio {
namespace iond {

class RootGuard {
 public:
  // Resolves `root` (it must be an existing directory).
  static Status Create(const std::string& root, RootGuard* guard);

  // Resolves a client's path: it must be absolute, name an existing regular file, and resolve
  // to a path inside the root. *resolved is the canonical path (also the key that lets clients
  // share one daemon file).
  Status Resolve(const std::string& path, std::string* resolved) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;  // canonical, without a trailing slash except for "/"
};

// True if `path` is `root` or below it by whole components ("/data2" is not inside "/data").
// Both must be canonical.
bool IsInside(const std::string& root, const std::string& path);

}  // namespace iond
}  // namespace stagio
