#include "storage/memory_driver.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <utility>

namespace stagio {
namespace {

// Mirrors what the kernel answers for the same mistake on a descriptor.
Status BadMode(const char* op, const std::string& path, uint64_t offset) {
  return Status::IOError(std::string(op) + " " + path + " offset " + std::to_string(offset) +
                         ": " + std::strerror(EBADF));
}

class MemoryFile : public DriverFile {
 public:
  MemoryFile(std::string path, OpenAccess access, std::shared_ptr<MemoryDriver::FileData> data)
      : path_(std::move(path)),
        can_read_(access != OpenAccess::kWriteOnly),
        can_write_(access != OpenAccess::kReadOnly),
        data_(std::move(data)) {}

  Status ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) override {
    *bytes_read = 0;
    if (!can_read_) return BadMode("read", path_, offset);
    std::lock_guard<std::mutex> lock(data_->mutex);
    const std::string& bytes = data_->bytes;
    if (offset >= bytes.size()) return Status::OK();  // at or past end of file
    const size_t available = bytes.size() - static_cast<size_t>(offset);
    *bytes_read = length < available ? length : available;
    std::memcpy(buffer, bytes.data() + offset, *bytes_read);
    return Status::OK();
  }

  Status WriteAt(uint64_t offset, const void* buffer, size_t length) override {
    if (!can_write_) return BadMode("write", path_, offset);
    if (length == 0) return Status::OK();
    std::lock_guard<std::mutex> lock(data_->mutex);
    std::string& bytes = data_->bytes;
    if (offset > std::numeric_limits<size_t>::max() - length) {
      return Status::IOError("write " + path_ + " offset " + std::to_string(offset) +
                             ": " + std::strerror(EFBIG));
    }
    const size_t end = static_cast<size_t>(offset) + length;
    Status status = EnsureSize(end, "write", offset);
    if (!status.ok()) return status;
    std::memcpy(&bytes[offset], buffer, length);
    return Status::OK();
  }

  Status GetSize(uint64_t* size) override {
    std::lock_guard<std::mutex> lock(data_->mutex);
    *size = data_->bytes.size();
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    if (!can_write_) return BadMode("truncate", path_, size);
    std::lock_guard<std::mutex> lock(data_->mutex);
    if (size <= data_->bytes.size()) {
      data_->bytes.resize(static_cast<size_t>(size));
      return Status::OK();
    }
    return EnsureSize(size, "truncate", size);
  }

  Status Sync() override { return Status::OK(); }  // memory is as durable as it gets here

  const std::string& path() const override { return path_; }

 private:
  // Grows the file to at least `size` bytes, zero-filled like a sparse hole. Caller holds the
  // file's mutex. A size that cannot be allocated is an I/O error, not a crash.
  Status EnsureSize(uint64_t size, const char* op, uint64_t offset) {
    std::string& bytes = data_->bytes;
    if (size <= bytes.size()) return Status::OK();
    try {
      if (size > bytes.max_size()) throw std::bad_alloc();
      bytes.resize(static_cast<size_t>(size), '\0');
    } catch (const std::exception&) {
      return Status::IOError(std::string(op) + " " + path_ + " offset " + std::to_string(offset) +
                             ": " + std::strerror(ENOSPC));
    }
    return Status::OK();
  }

  const std::string path_;
  const bool can_read_;
  const bool can_write_;
  const std::shared_ptr<MemoryDriver::FileData> data_;
};

}  // namespace

void MemoryDriver::CreateFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<FileData>& data = files_[path];
  if (data == nullptr) data = std::make_shared<FileData>();
}

std::string MemoryDriver::Contents(const std::string& path) {
  std::shared_ptr<FileData> data;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = files_.find(path);
    if (it == files_.end()) return std::string();
    data = it->second;
  }
  std::lock_guard<std::mutex> lock(data->mutex);
  return data->bytes;
}

Status MemoryDriver::Open(const std::string& path, OpenAccess access,
                          std::unique_ptr<DriverFile>* file) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = files_.find(path);
  if (it == files_.end()) {
    return Status::NotFound("open " + path + ": " + std::strerror(ENOENT));
  }
  *file = std::make_unique<MemoryFile>(path, access, it->second);
  return Status::OK();
}

}  // namespace stagio
