// IondFile: one open file of the I/O-node tier (see iond_driver.h for the fallback rules).
//
// Each read or write is cut into pieces by home daemon (BlockHomes); all pieces are sent
// before any reply is awaited, so a request spanning several daemons costs one round trip.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "net/client_connection.h"
#include "storage/block_homes.h"
#include "storage/driver.h"

namespace stagio {

class IondFile : public DriverFile {
 public:
  // `handles[i]` is the file's handle at `connections[i]`. `direct` is the same file opened
  // through the driver below. `speak`: this process prints the fallback warning.
  IondFile(std::unique_ptr<DriverFile> direct,
           std::vector<std::shared_ptr<net::ClientConnection>> connections,
           std::vector<uint64_t> handles, bool speak);
  ~IondFile() override;  // closes the daemons' handles

  Status ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) override;
  Status WriteAt(uint64_t offset, const void* buffer, size_t length) override;
  Status GetSize(uint64_t* size) override;
  Status Truncate(uint64_t size) override;
  Status Sync() override;
  Status Flush() override;
  Status Invalidate() override;
  void SetBlockLayout(uint64_t block_size, uint64_t aggregators) override;
  const std::string& path() const override { return direct_->path(); }

 private:
  // Sends `type` with the file's handle to every daemon and waits for all replies.
  // With `skip_lost`, only to the daemons whose connection is still up.
  Status ToEveryDaemon(net::MessageType type, bool skip_lost = false);
  // Flush or Sync at every daemon; on success the writes sent before it count as flushed.
  Status FlushDaemons(net::MessageType type);
  // Reads or writes through the daemons; fails with the connection's error if one broke.
  Status ReadThroughDaemons(uint64_t offset, char* buffer, size_t length, size_t* bytes_read);
  Status WriteThroughDaemons(uint64_t offset, const char* buffer, size_t length);
  // Grows *size to the largest size any daemon knows.
  Status StatEveryDaemon(uint64_t* size);
  // Runs `operation` through the daemons unless the file went direct. False means the caller
  // must do it directly: the file was direct already, or a daemon was lost during it (then
  // this falls back first).
  template <typename Operation>
  bool UseDaemons(Operation&& operation, Status* status);
  bool AnyDaemonLost() const;
  // Switches the file to the direct path, once: the surviving daemons flush and release it,
  // and if writes may have been lost, the next Flush or Sync says so.
  void FallBack(const Status& failure);
  // Flush and Sync after the fall-back: fails once if accepted writes may have been lost.
  Status TakeLostWrites();
  BlockHomes homes() const;

  const std::unique_ptr<DriverFile> direct_;
  const std::vector<std::shared_ptr<net::ClientConnection>> connections_;
  const std::vector<uint64_t> handles_;
  const bool speak_;
  std::atomic<uint64_t> block_size_{1 << 20};
  std::atomic<uint64_t> aggregators_{1};
  // Held shared by every operation through the daemons, exclusively by FallBack.
  std::shared_mutex daemon_path_mutex_;
  std::atomic<bool> direct_only_{false};
  // Write requests sent to the daemons, and how many of them a successful Flush or Sync
  // covered: when a daemon is lost, the difference says whether data may be lost with it.
  std::atomic<uint64_t> writes_sent_{0};
  std::atomic<uint64_t> writes_flushed_{0};
  std::mutex lost_writes_mutex_;
  std::string lost_writes_;  // the error to report once; "" if none
};

}  // namespace stagio
