// The POSIX driver: one descriptor per open file, positioned I/O with pread/pwrite so that
// concurrent calls on one file need no shared file offset and no lock.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "storage/driver.h"

namespace stagio {
namespace {

// "pwrite /scratch/out offset 4096: No space left on device"
Status PosixError(const char* op, const std::string& path, uint64_t offset, int error) {
  return Status::IOError(std::string(op) + " " + path + " offset " + std::to_string(offset) +
                         ": " + std::strerror(error));
}

Status PosixError(const char* op, const std::string& path, int error) {
  return Status::IOError(std::string(op) + " " + path + ": " + std::strerror(error));
}

int OpenFlags(OpenAccess access) {
  // Never O_CREAT or O_TRUNC: the file was created (or truncated) by MPI already, and a
  // driver that created files would hide a missing one.
  switch (access) {
    case OpenAccess::kReadOnly: return O_RDONLY | O_CLOEXEC;
    case OpenAccess::kWriteOnly: return O_WRONLY | O_CLOEXEC;
    case OpenAccess::kReadWrite: return O_RDWR | O_CLOEXEC;
  }
  return O_RDONLY | O_CLOEXEC;
}

class PosixFile : public DriverFile {
 public:
  PosixFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixFile() override { ::close(fd_); }

  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  Status ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) override {
    char* destination = static_cast<char*>(buffer);
    size_t done = 0;
    // Short reads happen (signals, network file systems); only a 0 return means end of file.
    while (done < length) {
      const ssize_t got = ::pread(fd_, destination + done, length - done,
                                  static_cast<off_t>(offset + done));
      if (got < 0) {
        if (errno == EINTR) continue;
        *bytes_read = done;
        return PosixError("pread", path_, offset + done, errno);
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    *bytes_read = done;
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, const void* buffer, size_t length) override {
    const char* source = static_cast<const char*>(buffer);
    size_t done = 0;
    while (done < length) {
      const ssize_t put = ::pwrite(fd_, source + done, length - done,
                                   static_cast<off_t>(offset + done));
      if (put < 0) {
        if (errno == EINTR) continue;
        return PosixError("pwrite", path_, offset + done, errno);
      }
      // pwrite of a nonzero length returning 0 would loop forever; the kernel only does it
      // when it cannot make progress, which is what ENOSPC says.
      if (put == 0) return PosixError("pwrite", path_, offset + done, ENOSPC);
      done += static_cast<size_t>(put);
    }
    return Status::OK();
  }

  Status GetSize(uint64_t* size) override {
    struct stat info;
    if (::fstat(fd_, &info) != 0) return PosixError("fstat", path_, errno);
    *size = static_cast<uint64_t>(info.st_size);
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return PosixError("ftruncate", path_, size, errno);
    }
    return Status::OK();
  }

  Status Sync() override {
    while (::fsync(fd_) != 0) {
      if (errno != EINTR) return PosixError("fsync", path_, errno);
    }
    return Status::OK();
  }

  std::optional<FileVersion> Version() override {
    struct stat info {};
    if (::fstat(fd_, &info) != 0) return std::nullopt;
    FileVersion version;
    version.size = static_cast<uint64_t>(info.st_size);
    version.modified_ns = int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec;
    return version;
  }

  // Linux refuses an lseek past the file system's largest file (s_maxbytes: 16 TiB on ext4
  // with 4 KiB blocks) with EINVAL, so a binary search over offsets finds it: 63 calls, once.
  // The descriptor's own offset moves, which nothing here uses (all I/O is positioned).
  std::optional<uint64_t> LargestSize() override {
    std::call_once(largest_size_once_, [this] {
      uint64_t accepted = 0;
      uint64_t refused = static_cast<uint64_t>(std::numeric_limits<off_t>::max()) + 1;
      if (::lseek(fd_, static_cast<off_t>(refused - 1), SEEK_SET) >= 0) {
        largest_size_ = refused - 1;
        return;
      }
      while (refused - accepted > 1) {
        const uint64_t middle = accepted + (refused - accepted) / 2;
        (::lseek(fd_, static_cast<off_t>(middle), SEEK_SET) >= 0 ? accepted : refused) = middle;
      }
      if (accepted > 0) largest_size_ = accepted;  // 0: lseek does not work here; say nothing
    });
    return largest_size_;
  }

  const std::string& path() const override { return path_; }
  std::optional<uint64_t> DeviceId() const override {
    struct stat info {};
    if (::fstat(fd_, &info) != 0) return std::nullopt;
    return static_cast<uint64_t>(info.st_dev);
  }

 private:
  const std::string path_;
  const int fd_;
  std::once_flag largest_size_once_;
  std::optional<uint64_t> largest_size_;
};

class PosixDriverImpl : public Driver {
 public:
  Status Open(const std::string& path, OpenAccess access,
              std::unique_ptr<DriverFile>* file) override {
    int fd;
    do {
      fd = ::open(path.c_str(), OpenFlags(access));
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return PosixError("open", path, errno);
    *file = std::make_unique<PosixFile>(path, fd);
    return Status::OK();
  }

  const char* name() const override { return "posix"; }
};

}  // namespace

std::unique_ptr<DriverFile> PosixFileFromDescriptor(std::string path, int fd) {
  return std::make_unique<PosixFile>(std::move(path), fd);
}

Driver* PosixDriver() {
  // Stateless, so one instance serves every file; leaked so files closed during exit still work.
  static Driver* driver = new PosixDriverImpl;
  return driver;
}

}  // namespace stagio
