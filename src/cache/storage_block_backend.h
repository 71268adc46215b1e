// StorageBlockBackend: the BlockBackend of a file whose blocks come from and go back to a
// storage DriverFile. Besides the I/O it keeps what outlives a single call: the file's
// counters, the first write-back error not yet reported (the I/O thread records it; the
// file's next sync or close reports it), and the file size as the cache's user must see it.
//
// Storage alone cannot say that size: bytes written into the cache and not yet written back lie
// past storage's end of file. So the known size only grows, to the largest of what storage
// said (at open, or when asked again) and every end of file a fetch observed; the user grows
// it by each end of a write, and resets it when storage is the truth again (after a truncation).
//
// Every request is timed into the file's StorageSpeed, which the direct path reads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cache/block_cache.h"
#include "common/stats.h"
#include "storage/driver.h"
#include "storage/storage_speed.h"

namespace stagio {

class StorageBlockBackend : public BlockBackend {
 public:
  StorageBlockBackend(std::unique_ptr<DriverFile> file, uint64_t block_size,
                      uint64_t known_size = 0);

  Status ReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length, char* buffer,
                   uint64_t* bytes_read) override;
  Status WriteRange(uint64_t index, uint64_t offset_in_block, const char* data,
                    uint64_t length) override;
  void RecordWriteBackError(const Status& status) override;
  FileStats* stats() override { return &stats_; }
  // How fast this file's storage moved the bytes of stagio's requests lately.
  StorageSpeed& storage_speed() { return storage_speed_; }

  // The first write-back error since the last call, which clears it; OK if none.
  Status TakeWriteBackError();

  uint64_t known_size() const { return known_size_.load(); }
  void GrowKnownSize(uint64_t size);
  void ResetKnownSize(uint64_t size) { known_size_.store(size); }
  // Asks storage for its size and grows the known size to it.
  Status RefreshKnownSize();

  DriverFile* driver_file() { return file_.get(); }
  uint64_t block_size() const { return block_size_; }
  void set_block_size(uint64_t block_size) { block_size_ = block_size; }

 private:
  std::unique_ptr<DriverFile> file_;
  uint64_t block_size_;
  FileStats stats_;
  StorageSpeed storage_speed_;
  std::mutex error_mutex_;
  Status write_back_error_;
  std::atomic<uint64_t> known_size_;
};

}  // namespace stagio
