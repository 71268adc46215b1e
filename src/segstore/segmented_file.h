// SegmentedFile: the segment store's place in a file's storage chain (driver.h), between the
// daemon's block cache (above) and the backing file (below). Reads go through the store;
// writes, truncations and invalidations drop what it holds of the range before storage
// changes; a sync checks that the file did not change behind the daemon.
#pragma once

#include <memory>
#include <string>

#include "segstore/extent.h"
#include "segstore/segment_store.h"
#include "storage/driver.h"

namespace stagio {
namespace segstore {

class SegmentedFile : public DriverFile {
 public:
  // `store` must outlive the file.
  SegmentedFile(std::unique_ptr<DriverFile> storage, SegmentStore* store, FileKey key);

  Status ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) override;
  Status WriteAt(uint64_t offset, const void* buffer, size_t length) override;
  Status GetSize(uint64_t* size) override { return storage_->GetSize(size); }
  Status Truncate(uint64_t size) override;
  Status Sync() override;
  Status Flush() override { return storage_->Flush(); }
  Status Invalidate() override;
  void WillChange(uint64_t offset, uint64_t length) override;
  std::optional<FileVersion> Version() override { return storage_->Version(); }
  std::optional<uint64_t> LargestSize() override { return storage_->LargestSize(); }
  void SetBlockLayout(uint64_t block_size, uint64_t aggregators) override {
    storage_->SetBlockLayout(block_size, aggregators);
  }
  const std::string& path() const override { return storage_->path(); }
  std::optional<uint64_t> DeviceId() const override { return storage_->DeviceId(); }

 private:
  const std::unique_ptr<DriverFile> storage_;
  SegmentStore* const store_;
  const FileKey key_;
};

}  // namespace segstore
}  // namespace stagio
