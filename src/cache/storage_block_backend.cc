#include "cache/storage_block_backend.h"

#include "storage/request_timer.h"

namespace stagio {

StorageBlockBackend::StorageBlockBackend(std::unique_ptr<DriverFile> file, uint64_t block_size,
                                         uint64_t known_size)
    : file_(std::move(file)), block_size_(block_size), known_size_(known_size) {}

Status StorageBlockBackend::ReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length,
                                      char* buffer, uint64_t* bytes_read) {
  const uint64_t offset = index * block_size_ + offset_in_block;
  size_t got = 0;
  const RequestTimer timer(length);
  Status status = file_->ReadAt(offset, buffer, length, &got);
  if (status.ok()) storage_speed_.Record(StorageDirection::kRead, got, timer.Seconds());
  *bytes_read = got;
  // Storage holding bytes there proves the file is at least that long.
  if (status.ok() && got > 0) GrowKnownSize(offset + got);
  return status;
}

Status StorageBlockBackend::WriteRange(uint64_t index, uint64_t offset_in_block,
                                       const char* data, uint64_t length) {
  const RequestTimer timer(length);
  Status status = file_->WriteAt(index * block_size_ + offset_in_block, data, length);
  if (status.ok()) storage_speed_.Record(StorageDirection::kWrite, length, timer.Seconds());
  return status;
}

void StorageBlockBackend::RecordWriteBackError(const Status& status) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (write_back_error_.ok()) write_back_error_ = status;
}

Status StorageBlockBackend::TakeWriteBackError() {
  std::lock_guard<std::mutex> lock(error_mutex_);
  Status error = std::move(write_back_error_);
  write_back_error_ = Status::OK();
  return error;
}

void StorageBlockBackend::GrowKnownSize(uint64_t size) {
  uint64_t current = known_size_.load();
  while (size > current && !known_size_.compare_exchange_weak(current, size)) {
  }
}

Status StorageBlockBackend::RefreshKnownSize() {
  uint64_t size = 0;
  Status status = file_->GetSize(&size);
  if (status.ok()) GrowKnownSize(size);
  return status;
}

}  // namespace stagio
