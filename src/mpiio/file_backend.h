// FileBackend: one open file as the block cache sees it (BlockBackend), over a storage
// DriverFile. It also keeps what must outlive a single call: the file's stats, the first
// write-back error not yet reported, and the largest end of file it has observed.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "cache/block_cache.h"
#include "prefetch/collective_prefetcher.h"
#include "prefetch/file_prefetcher.h"
#include "storage/driver.h"

namespace stagio {

class FileBackend : public BlockBackend {
 public:
  FileBackend(std::unique_ptr<DriverFile> file, const PrefetchConfig& prefetch);

  Status ReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length, char* buffer,
                   uint64_t* bytes_read) override;
  Status WriteRange(uint64_t index, uint64_t offset_in_block, const char* data,
                    uint64_t length) override;
  void RecordWriteBackError(const Status& status) override;
  FileStats* stats() override { return &stats_; }
  // Both prefetchers adapt their depth: the cache cannot tell which of them planned a block.
  void OnPrefetchOutcome(PrefetchOutcome outcome) override {
    prefetcher_.OnOutcome(outcome);
    collective_prefetcher_.OnOutcome(outcome);
  }

  // Decides this handle's prefetches from its own reads; it learns from their outcomes through
  // the backend.
  FilePrefetcher& prefetcher() { return prefetcher_; }
  // Decides, at an aggregator, prefetches from every rank's collective reads.
  CollectivePrefetcher& collective_prefetcher() { return collective_prefetcher_; }

  // The first write-back error since the last call, which clears it; OK if none.
  Status TakeWriteBackError();

  // The file size as this rank must see it: at least what storage said at open, sync or
  // set_size, every end of file a fetch observed, and the end of every byte this rank wrote.
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
  FilePrefetcher prefetcher_;
  CollectivePrefetcher collective_prefetcher_;
  std::mutex error_mutex_;
  Status write_back_error_;
  std::atomic<uint64_t> known_size_{0};
};

}  // namespace stagio
