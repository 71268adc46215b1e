// DaemonFile: one file the daemon has open, as the block cache sees it, shared by every handle
// that names the same file. The block I/O, the write-back error to report and the
// known size (which counts bytes written into the cache and not yet on storage, and which a
// read past it refreshes from storage, as another writer may have extended the file) are those
// of any cached storage file (StorageBlockBackend); the daemon adds the file's cache id,
// whether the descriptor may write, and how far to prefetch.
//
// The prefetch depth (client blocks after each read, seed 004 V-D) learns from what became of
// the file's prefetched blocks, as a client's does (PrefetchDepth): it starts at two blocks,
// blocks evicted unused halve it, blocks a read fetched itself first shrink it, blocks used
// grow it, never above --prefetch-blocks. A daemon's cache is shared by every client, and
// reads that stop at the end of each client's part of a file (a tile, a band of rows) leave
// what was prefetched past it unused; a fixed depth kept fetching those blocks, each pushing
// out one a client was about to read.
//
// The cache reports one outcome per daemon block, and a client block may be several of them:
// k outcomes of one kind count as one client block's, so that a client block of 4 daemon
// blocks evicted unused halves the depth once, not four times. The unit is the block size of
// the latest client to read the file (clients of one file normally share it).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "cache/storage_block_backend.h"
#include "prefetch/prefetch_depth.h"
#include "storage/driver.h"

namespace stagio {
namespace iond {

// A file's identity on the daemon's machine: every name of one file has the same, so clients
// that name it differently still share one DaemonFile.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator<(const FileIdentity& other) const {
    return device != other.device ? device < other.device : inode < other.inode;
  }
};

class DaemonFile : public StorageBlockBackend {
 public:
  // `id` is the file's key in the block cache; `writable` says whether the descriptor was
  // opened for writing.
  // `prefetch_blocks` is the greatest prefetch depth, in client blocks; 0 prefetches nothing.
  DaemonFile(uint64_t id, FileIdentity identity, std::unique_ptr<DriverFile> file, bool writable,
             uint64_t block_size, uint64_t size_at_open, uint64_t prefetch_blocks)
      : StorageBlockBackend(std::move(file), block_size, size_at_open),
        id_(id),
        identity_(identity),
        writable_(writable),
        prefetch_depth_(/*one client block=*/1, prefetch_blocks),
        prefetch_off_(prefetch_blocks == 0) {}

  // Client blocks to prefetch after a read now, by a client whose blocks are
  // `client_block_size` bytes (0: the daemon's); the outcomes that follow count in those.
  uint64_t PrefetchDepthFor(uint64_t client_block_size = 0);
  // The cache reports each prefetched daemon block's fate, with one of its locks held.
  void OnPrefetchOutcome(PrefetchOutcome outcome) override;

  uint64_t id() const { return id_; }
  const FileIdentity& identity() const { return identity_; }
  bool writable() const { return writable_; }
  const std::string& path() { return driver_file()->path(); }

 private:
  const uint64_t id_;
  const FileIdentity identity_;
  const bool writable_;
  PrefetchDepth prefetch_depth_;  // counted in client blocks
  const bool prefetch_off_;
  std::mutex outcomes_mutex_;     // guards the two below; taken under a cache lock
  uint64_t blocks_per_client_block_ = 1;
  static constexpr size_t kOutcomeKinds = static_cast<size_t>(PrefetchOutcome::kWasted) + 1;
  std::array<uint64_t, kOutcomeKinds> pending_outcomes_{};  // by PrefetchOutcome, < a client block's
};

}  // namespace iond
}  // namespace stagio
