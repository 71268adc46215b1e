// IondDriver: the client side of the I/O-node tier. Files are read and written through the
// stagio-iond daemons named by STAGIO_IOND, each block at its home daemon (BlockHomes); the
// driver below (posix, or fault for tests) is the direct path to the same files.
//
// Falling back. A client never fails an I/O the direct path could do:
//   - A daemon that cannot be reached or refuses (wrong token) when a file is opened: the file
//     is read and written directly, and rank 0 warns once.
//   - A daemon that refuses one file (outside its root): that file goes direct, with a warning.
//   - A daemon that dies, or hangs past the timeout, while a file is open: the file goes
//     direct from then on. Data the
//     client still holds is written directly. Writes the daemon had accepted but maybe not yet
//     written to storage may be lost, so the next Flush or Sync of the file fails once
//     (MPI_ERR_IO at the application's sync or close); what a successful sync reported
//     durable is on storage already.
// A failed connection is never retried: a daemon that came back would not have the data.
//
// Threading: thread-safe, as every Driver. Connections are shared by all files of the process.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/address.h"
#include "net/client_connection.h"
#include "storage/driver.h"

namespace stagio {

// The process's connections to its daemons, opened at the first file and kept.
class IondConnections {
 public:
  // `timeout`: how long a daemon may keep silent (net::ClientConnection's deadline).
  IondConnections(std::vector<net::Address> daemons, std::string token, net::Timeout timeout)
      : daemons_(std::move(daemons)), token_(std::move(token)), timeout_(timeout) {}

  // All connections, in the order of the daemon list; fails (naming the daemon and why) if
  // any daemon cannot be reached, refused us, or was lost.
  Status Get(std::vector<std::shared_ptr<net::ClientConnection>>* connections);
  size_t count() const { return daemons_.size(); }

 private:
  const std::vector<net::Address> daemons_;
  const std::string token_;
  const net::Timeout timeout_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<net::ClientConnection>> connections_;
  Status failure_;  // the first connection failure, kept: no retries
};

class IondDriver : public Driver {
 public:
  // `direct`: the driver below, used for fallback; must outlive this driver and its files.
  // `speak`: this process prints the fallback warnings (rank 0 of the job). `timeout`: how
  // long a daemon may keep silent while a request waits before it counts as lost.
  IondDriver(Driver* direct, std::vector<net::Address> daemons, std::string token,
             net::Timeout timeout, bool speak);

  Status Open(const std::string& path, OpenAccess access,
              std::unique_ptr<DriverFile>* file) override;
  const char* name() const override { return "iond"; }

  // Replaces the direct driver for files opened from now on (stagio_driver=fault in tests).
  void set_direct(Driver* direct) { direct_ = direct; }

 private:
  Driver* direct_;
  std::shared_ptr<IondConnections> connections_;
  const bool speak_;
};

}  // namespace stagio
