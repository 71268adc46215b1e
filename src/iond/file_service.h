// FileService: what the daemon does to files, one method per request, independent of
// connections and of the wire. It owns the daemon's cache: one BlockCache for every file, and
// one IoThread that writes dirty blocks back (least recently modified first, by the water
// marks) and runs the prefetch jobs that reads plan.
//
// With a segment store configured (segstore/segment_store.h), every file's storage chain goes
// through it: FileTable puts a SegmentedFile between the cache and the descriptor. A store
// that cannot be made (its directory unwritable or full, a size below one segment) is logged
// and left out; the daemon serves from storage as without one.
//
// Consistency is the client's, as in seed 004 V-E: the daemon shares one copy of each block
// among all its clients, so a write through one connection is seen by a read through another
// at once; writes that bypass the daemon (a client's direct storage I/O) become visible after
// that client's Invalidate or Sync, which drop the clean cached bytes of the file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "iond/config.h"
#include "iond/daemon_file.h"
#include "iond/file_table.h"
#include "iond/log.h"
#include "iond/prefetch_plan.h"
#include "iond/root_guard.h"
#include "cache/io_thread.h"
#include "segstore/segment_store.h"

namespace stagio {
namespace iond {

class FileService {
 public:
  // Problems with the segment store go to `log`.
  FileService(const IondConfig& config, RootGuard root, LogSink log = nullptr);
  ~FileService();

  // Opens the client's `path` (confined to the root) for one handle.
  Status Open(const std::string& path, bool need_write, std::shared_ptr<DaemonFile>* file);
  // Serves [offset, offset + length): *data is shorter at the end of the file. Then, if
  // `prefetch_after`, queues prefetches of the next blocks of the client's aggregator
  // (prefetch_plan.h).
  Status Read(DaemonFile& file, uint64_t offset, uint64_t length, ClientLayout layout,
              bool prefetch_after, std::string* data);
  Status Write(DaemonFile& file, uint64_t offset, const std::string& data);
  // Writes the file's dirty bytes to storage; reports a background write-back error once.
  Status Flush(DaemonFile& file);
  // Flush, fsync, and drop the clean cached bytes (another writer may have written storage).
  Status Sync(DaemonFile& file);
  // Storage changed behind the daemon: drop the clean cached bytes, and take storage's size.
  Status Invalidate(DaemonFile& file);
  Status Stat(DaemonFile& file, uint64_t* size);
  // Flush, then give up the handle's hold on the file; the flush's status is the result.
  Status Close(const std::shared_ptr<DaemonFile>& file);

  // For shutdown: from now on the last close of a file also fsyncs it.
  void SyncOnLastClose() { files_.SyncOnLastRelease(); }
  // Writes back every dirty block and fsyncs every file still open. Returns "path: error" for
  // each file whose data may not be on storage.
  std::vector<std::string> FlushEverything();

  uint64_t block_size() const { return block_size_; }
  FileTable& files() { return files_; }
  BlockCache& cache() { return cache_; }
  IoThread& io_thread() { return io_thread_; }
  // Null when no segment store is configured, or it could not be made.
  segstore::SegmentStore* segment_store() { return segment_store_.get(); }

 private:
  void QueuePrefetches(DaemonFile& file, uint64_t offset, uint64_t length, ClientLayout layout);

  const uint64_t block_size_;
  const RootGuard root_;
  std::unique_ptr<segstore::SegmentStore> segment_store_;  // before the files, which use it
  BlockCache cache_;
  IoThread io_thread_;
  FileTable files_;
};

}  // namespace iond
}  // namespace stagio
