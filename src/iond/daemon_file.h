// DaemonFile: one file the daemon has open, as the block cache sees it, shared by every handle
// that names the same file. The block I/O, the write-back error to report and the
// known size (which counts bytes written into the cache and not yet on storage, and which a
// read past it refreshes from storage, as another writer may have extended the file) are those
// of any cached storage file (StorageBlockBackend); the daemon adds the file's cache id and
// whether the descriptor may write.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cache/storage_block_backend.h"
#include "storage/driver.h"

namespace stagio {
namespace iond {

// A file's identity on the daemon's machine: every name of one file has the same, so clients
// that name it differently still share one DaemonFile.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator<(const FileIdentity& other) const {
    return device != other.device ? device < other.device : inode < other.inode;
  }
};

class DaemonFile : public StorageBlockBackend {
 public:
  // `id` is the file's key in the block cache; `writable` says whether the descriptor was
  // opened for writing.
  DaemonFile(uint64_t id, FileIdentity identity, std::unique_ptr<DriverFile> file, bool writable,
             uint64_t block_size, uint64_t size_at_open)
      : StorageBlockBackend(std::move(file), block_size, size_at_open),
        id_(id),
        identity_(identity),
        writable_(writable) {}

  uint64_t id() const { return id_; }
  const FileIdentity& identity() const { return identity_; }
  bool writable() const { return writable_; }
  const std::string& path() { return driver_file()->path(); }

 private:
  const uint64_t id_;
  const FileIdentity identity_;
  const bool writable_;
};

}  // namespace iond
}  // namespace stagio
