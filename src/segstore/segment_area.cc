#include "segstore/segment_area.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <linux/fs.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace stagio {
namespace segstore {
namespace {

uint32_t Checksum(const char* data, uint64_t length) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (length > 0) {
    const uInt chunk = static_cast<uInt>(std::min<uint64_t>(length, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    length -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

Status Error(const std::string& what, const std::string& path, int error) {
  return Status::IOError(what + " " + path + ": " + std::strerror(error));
}

}  // namespace

SegmentArea::SegmentArea(std::string path, int fd, bool owns_file, uint64_t segment_size,
                         uint32_t slots)
    : path_(std::move(path)),
      owns_file_(owns_file),
      fd_(fd),
      segment_size_(segment_size),
      slots_(slots) {}

SegmentArea::~SegmentArea() {
  // Its bytes are useless to the next daemon, which starts empty: give the space back. Still
  // holding the lock, so that no daemon starting now loses its new file.
  if (owns_file_) ::unlink(path_.c_str());
  ::close(fd_);
}

Status SegmentArea::Open(const std::string& location, uint64_t size, uint64_t segment_size,
                         std::unique_ptr<SegmentArea>* area) {
  if (segment_size == 0 || size / segment_size == 0) {
    return Status::InvalidArgument("the segment store's size (" + std::to_string(size) +
                                   " bytes) holds no segment of " +
                                   std::to_string(segment_size) + " bytes");
  }
  struct stat info {};
  if (::stat(location.c_str(), &info) != 0) return Error("segment store", location, errno);
  std::string path = location;
  int fd = -1;
  if (S_ISBLK(info.st_mode)) {
    // O_EXCL: refused while the device is mounted or another daemon has it open.
    fd = ::open(path.c_str(), O_RDWR | O_EXCL | O_CLOEXEC);
    if (fd < 0) return Error("segment store: open", path, errno);
    uint64_t device_bytes = 0;
    if (::ioctl(fd, BLKGETSIZE64, &device_bytes) != 0) {
      const int error = errno;
      ::close(fd);
      return Error("segment store: size of", path, error);
    }
    size = std::min(size, device_bytes);
  } else if (S_ISDIR(info.st_mode)) {
    path = location + "/" + kFileName;
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return Error("segment store: cannot create", path, errno);
    // Two daemons on one directory would overwrite each other's segments.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd);
      return error == EWOULDBLOCK
                 ? Status::InvalidArgument("segment store " + path +
                                           " is in use by another daemon")
                 : Error("segment store: cannot lock", path, error);
    }
    // Anything an earlier daemon left is unknown to this one: start from an empty file.
    if (::ftruncate(fd, 0) != 0) {
      const int error = errno;
      ::close(fd);
      return Error("segment store: cannot empty", path, error);
    }
    int error = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (error == EOPNOTSUPP || error == EINVAL) {
      // A file system that cannot reserve space: the file grows as segments are written, and a
      // write that finds the disk full stops the grouping (segment_store.h).
      error = ::ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : errno;
    }
    if (error != 0) {
      ::close(fd);
      ::unlink(path.c_str());
      return Status::IOError("segment store: cannot reserve " + std::to_string(size) +
                             " bytes for " + path + ": " + std::strerror(error));
    }
  } else {
    return Status::InvalidArgument("segment store " + location +
                                   ": neither a directory nor a block device");
  }
  const uint64_t slots = std::min(size / segment_size, kMaxSlots);
  if (slots == 0) {
    ::close(fd);
    return Status::InvalidArgument("segment store " + path + " holds no segment of " +
                                   std::to_string(segment_size) + " bytes");
  }
  area->reset(new SegmentArea(path, fd, S_ISDIR(info.st_mode), segment_size,
                              static_cast<uint32_t>(slots)));
  return Status::OK();
}

Status SegmentArea::Write(uint32_t slot, const std::string& data) {
  if (slot >= slots_.size() || data.size() > segment_size_) {
    return Status::InvalidArgument("segment " + std::to_string(slot) + " of " +
                                   std::to_string(data.size()) + " bytes does not fit");
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_[slot].used = false;
  }
  const off_t base = static_cast<off_t>(uint64_t{slot} * segment_size_);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t put = ::pwrite(fd_, data.data() + done, data.size() - done,
                                 base + static_cast<off_t>(done));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return Error("segment store: pwrite", path_, put < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(put);
  }
  const uint32_t checksum = Checksum(data.data(), data.size());
  std::lock_guard<std::mutex> lock(mutex_);
  slots_[slot] = Slot{true, data.size(), checksum};
  return Status::OK();
}

Status SegmentArea::Read(uint32_t slot, std::string* data) const {
  Slot held;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slot < slots_.size()) held = slots_[slot];
  }
  if (!held.used) return Status::NotFound("segment " + std::to_string(slot) + " holds nothing");
  data->resize(held.length);
  const off_t base = static_cast<off_t>(uint64_t{slot} * segment_size_);
  size_t done = 0;
  while (done < held.length) {
    const ssize_t got = ::pread(fd_, data->data() + done, held.length - done,
                                base + static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error("segment store: pread", path_, errno);
    if (got == 0) {
      return Status::IOError("segment store " + path_ + ": segment " + std::to_string(slot) +
                             " is short (" + std::to_string(done) + " of " +
                             std::to_string(held.length) + " bytes): truncated");
    }
    done += static_cast<size_t>(got);
  }
  if (Checksum(data->data(), data->size()) != held.checksum) {
    return Status::IOError("segment store " + path_ + ": segment " + std::to_string(slot) +
                           " does not match its checksum: changed behind the daemon");
  }
  return Status::OK();
}

void SegmentArea::Forget(uint32_t slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (slot < slots_.size()) slots_[slot] = Slot();
}

}  // namespace segstore
}  // namespace stagio
