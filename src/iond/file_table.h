// FileTable: the daemon's open files, one DaemonFile per file (by identity, not by name).
//
// Clients that open the same file share its cache blocks: a block written through one
// connection is read by another before it reaches storage, as the seed's single copy per level
// requires. Each Open counts a user of the entry; the last Release takes it out of the table,
// flushes it once more (in case a write raced with the closes), drops its blocks, unregisters
// it from the cache and closes the descriptor. An Open of the same path meanwhile creates a
// fresh entry; it reads storage, which the flush has brought up to date.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/block_cache.h"
#include "common/status.h"
#include "iond/daemon_file.h"
#include "iond/root_guard.h"
#include "cache/io_thread.h"
#include "segstore/segment_store.h"

namespace stagio {
namespace iond {

class FileTable {
 public:
  // Files prefetch at most `prefetch_blocks` client blocks after a read (DaemonFile). With a
  // segment store, every file's reads and writes go through it.
  FileTable(BlockCache* cache, IoThread* io_thread, uint64_t block_size,
            uint64_t prefetch_blocks, segstore::SegmentStore* segment_store = nullptr);
  ~FileTable();  // releases what is left without flushing (Stop flushes first)

  // Takes the file RootGuard opened, or shares the entry already open for the same file (the
  // new descriptor is then closed). A file the daemon may only read fails `need_write`.
  Status Acquire(OpenedFile opened, bool need_write, std::shared_ptr<DaemonFile>* file);
  // Drops one user; the last one closes the file as described above. Returns that final
  // flush's error (the data it could not write is lost: the caller logs it).
  Status Release(const std::shared_ptr<DaemonFile>& file);

  // From now on the last Release also fsyncs, as shutdown must leave every file durable.
  void SyncOnLastRelease() { sync_on_last_release_ = true; }

  std::vector<std::shared_ptr<DaemonFile>> OpenFiles() const;
  // The open file that `path` names on this machine, or null (tests look at its blocks).
  std::shared_ptr<DaemonFile> Find(const std::string& path) const;
  // Counters summed over open and closed files (FileStats::ToJson shape).
  nlohmann::json StatsJson() const;

 private:
  struct Entry {
    std::shared_ptr<DaemonFile> file;
    uint64_t users = 0;
  };
  Status OpenEntry(OpenedFile opened, std::shared_ptr<DaemonFile>* file);
  void Forget(const std::shared_ptr<DaemonFile>& file);

  BlockCache* const cache_;
  IoThread* const io_thread_;
  const uint64_t block_size_;
  const uint64_t prefetch_blocks_;
  segstore::SegmentStore* const segment_store_;
  std::atomic<bool> sync_on_last_release_{false};
  mutable std::mutex mutex_;
  std::map<FileIdentity, Entry> entries_;
  uint64_t next_id_ = 1;                  // cache file ids; never reused
  mutable std::mutex stats_mutex_;
  FileStats closed_stats_;  // files already closed
};

}  // namespace iond
}  // namespace stagio
