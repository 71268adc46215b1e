// Driver: stagio's view of the storage below the caches.
//
// Contract. A Driver opens files by path and hands out DriverFile objects; a DriverFile does
// positioned reads and writes. Every call may run on the application thread or on the rank's
// I/O thread, so implementations must be thread-safe: concurrent calls on one DriverFile are
// allowed (they behave like concurrent pread/pwrite on one descriptor).
//
// Drivers compose as a chain, like LevelDB's Env/EnvWrapper: DriverWrapper forwards every call
// to the driver below it, and a subclass overrides only what it changes (fault injection today;
// the iond client; the daemon's segment store).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"

namespace stagio {

enum class OpenAccess { kReadOnly, kWriteOnly, kReadWrite };

// What a file's content is known by without reading it: a copy of its bytes kept elsewhere
// (the segment store) is current only while these stay the same.
struct FileVersion {
  uint64_t size = 0;
  int64_t modified_ns = 0;
  bool operator==(const FileVersion& other) const {
    return size == other.size && modified_ns == other.modified_ns;
  }
  bool operator!=(const FileVersion& other) const { return !(*this == other); }
};

class DriverFile {
 public:
  virtual ~DriverFile() = default;

  // Reads up to `length` bytes at `offset` into `buffer` and sets *bytes_read. Fewer bytes than
  // asked for means end of file; it is not an error.
  virtual Status ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) = 0;
  // Writes all `length` bytes at `offset`, extending the file if needed. Partial writes are
  // retried inside; a short write is an error.
  virtual Status WriteAt(uint64_t offset, const void* buffer, size_t length) = 0;
  virtual Status GetSize(uint64_t* size) = 0;
  virtual Status Truncate(uint64_t size) = 0;
  // Makes everything written so far durable in the storage below.
  virtual Status Sync() = 0;
  // Makes everything written so far reach the backing file system (not necessarily its disk:
  // that is Sync). Only drivers that hold data of their own (the iond client, whose daemon
  // caches) have anything to do: MPI_File_close promises this much, and PMPI may only touch
  // the file after it.
  virtual Status Flush() { return Status::OK(); }
  // The file changed behind this driver (PMPI wrote it or set its size): drivers that cache
  // must forget the clean bytes they hold. Dirty ones were flushed before.
  virtual Status Invalidate() { return Status::OK(); }
  // Bytes [offset, offset + length) are about to change above this driver (a write the cache
  // holds before it writes it back). Drivers that keep a copy of storage's bytes drop theirs
  // now, so that no read meets the old bytes after the write is acknowledged.
  virtual void WillChange(uint64_t offset, uint64_t length) {}
  // The file's size and modification time, for drivers over a local file system; none where
  // storage is elsewhere.
  virtual std::optional<FileVersion> Version() { return std::nullopt; }
  // The largest size the file system lets this file reach (a write ending past it fails with
  // EFBIG), for drivers that can tell; none where unknown. A cache that acknowledges writes
  // before it writes them back checks them against it, so that such a write fails when it is
  // made, as without the cache, not later where nobody waits for the error.
  virtual std::optional<uint64_t> LargestSize() { return std::nullopt; }
  // How the cache above cuts the file into blocks and deals them round-robin to `aggregators`
  // aggregators. Drivers that place blocks by aggregator (iond: seed 004, Fig. 5) use it; every
  // client of a file must set the same layout, so that each block has one home.
  virtual void SetBlockLayout(uint64_t block_size, uint64_t aggregators) {}
  // The path this file was opened with, for messages.
  virtual const std::string& path() const = 0;
  // The local device the file is on (its st_dev), for drivers that read a local file system:
  // files on one device start from the speed the process's other files found there
  // (DeviceSpeeds). None for drivers whose storage is elsewhere.
  virtual std::optional<uint64_t> DeviceId() const { return std::nullopt; }
};

class Driver {
 public:
  virtual ~Driver() = default;
  // Opens an existing file. Creation is MPI's job (the file is opened through PMPI first).
  virtual Status Open(const std::string& path, OpenAccess access,
                      std::unique_ptr<DriverFile>* file) = 0;
  virtual const char* name() const = 0;
};

// Forwards every call to `target`, which must outlive the wrapper.
class DriverWrapper : public Driver {
 public:
  explicit DriverWrapper(Driver* target) : target_(target) {}
  Status Open(const std::string& path, OpenAccess access,
              std::unique_ptr<DriverFile>* file) override {
    return target_->Open(path, access, file);
  }
  Driver* target() const { return target_; }

 private:
  Driver* target_;
};

// The process-wide POSIX driver (pread/pwrite on a descriptor per file). Never null.
Driver* PosixDriver();
// A POSIX driver file over a descriptor opened elsewhere (the daemon opens files beneath its
// root itself); it takes the descriptor and closes it. `path` is for messages.
std::unique_ptr<DriverFile> PosixFileFromDescriptor(std::string path, int fd);

}  // namespace stagio
