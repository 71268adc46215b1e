// MemoryDriver: files held in memory, for tests of everything above the driver. It behaves like
// the POSIX driver where tests can tell: open never creates, reads stop at end of file, writes
// past the end zero-fill the gap, and the open mode is enforced.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "storage/driver.h"

namespace stagio {

class MemoryDriver : public Driver {
 public:
  MemoryDriver() = default;
  MemoryDriver(const MemoryDriver&) = delete;
  MemoryDriver& operator=(const MemoryDriver&) = delete;

  // Creates an empty file at `path`, as MPI would before stagio opens it. An existing file is
  // left as it is (like O_CREAT without O_TRUNC).
  void CreateFile(const std::string& path);
  // The whole contents of `path`; empty if there is no such file.
  std::string Contents(const std::string& path);

  Status Open(const std::string& path, OpenAccess access,
              std::unique_ptr<DriverFile>* file) override;
  const char* name() const override { return "memory"; }

  // The bytes of one file, shared by every handle open on it (and outliving the driver's map
  // entry, like an unlinked file that is still open).
  struct FileData {
    std::mutex mutex;
    std::string bytes;
  };

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<FileData>> files_;
};

}  // namespace stagio
