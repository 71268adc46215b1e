// FileBackend: one open MPI file as the block cache sees it: the storage backend (I/O over a
// DriverFile, the file's stats, the first write-back error not yet reported, the largest end
// of file observed; see StorageBlockBackend) plus the file's two prefetchers.
#pragma once

#include <memory>

#include "cache/storage_block_backend.h"
#include "prefetch/collective_prefetcher.h"
#include "prefetch/file_prefetcher.h"
#include "storage/driver.h"

namespace stagio {

class FileBackend : public StorageBlockBackend {
 public:
  FileBackend(std::unique_ptr<DriverFile> file, const PrefetchConfig& prefetch)
      : StorageBlockBackend(std::move(file), prefetch.block_size),
        prefetcher_(prefetch),
        collective_prefetcher_(prefetch) {}

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

 private:
  FilePrefetcher prefetcher_;
  CollectivePrefetcher collective_prefetcher_;
};

}  // namespace stagio
