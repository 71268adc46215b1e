#include "segstore/segmented_file.h"

namespace stagio {
namespace segstore {

SegmentedFile::SegmentedFile(std::unique_ptr<DriverFile> storage, SegmentStore* store,
                             FileKey key)
    : storage_(std::move(storage)), store_(store), key_(key) {
  store_->Track(key_, storage_->path(), storage_->Version());
}

Status SegmentedFile::ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) {
  return store_->Read(key_, storage_.get(), offset, buffer, length, bytes_read);
}

Status SegmentedFile::WriteAt(uint64_t offset, const void* buffer, size_t length) {
  IdleTracker::Scope demand(&store_->idle());
  store_->Invalidate(key_, offset, length);
  Status status = storage_->WriteAt(offset, buffer, length);
  store_->Rewritten(key_, offset, length, storage_->Version());
  return status;
}

Status SegmentedFile::Truncate(uint64_t size) {
  IdleTracker::Scope demand(&store_->idle());
  store_->DropFile(key_);
  Status status = storage_->Truncate(size);
  store_->DropFile(key_);  // what a grouping run read before the truncation
  store_->Rewritten(key_, 0, 0, storage_->Version());
  return status;
}

Status SegmentedFile::Sync() {
  Status status = storage_->Sync();
  // Another writer's data is visible after a sync: segments made before it came are stale.
  store_->Track(key_, storage_->path(), storage_->Version());
  return status;
}

Status SegmentedFile::Invalidate() {
  store_->DropFile(key_);
  // The client changed storage itself: the file is at a new version, which later groups are
  // made from.
  store_->Track(key_, storage_->path(), storage_->Version());
  return storage_->Invalidate();
}

void SegmentedFile::WillChange(uint64_t offset, uint64_t length) {
  store_->Invalidate(key_, offset, length);
  storage_->WillChange(offset, length);
}

}  // namespace segstore
}  // namespace stagio
