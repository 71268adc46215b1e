#include "iond/file_service.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "cache/block_map.h"
#include "net/frame.h"

namespace stagio {
namespace iond {
namespace {

// Offsets and lengths come from the client: a range past the largest off_t cannot be a
// file's (and a write there would fail its write-back forever, for every client of the file).
Status CheckRange(const char* what, uint64_t offset, uint64_t length) {
  constexpr uint64_t kLargestOffset = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (length > kLargestOffset || offset > kLargestOffset - length) {
    return Status::InvalidArgument(std::string(what) + " at offset " + std::to_string(offset) +
                                   " of " + std::to_string(length) +
                                   " bytes runs past the largest file offset");
  }
  return Status::OK();
}

// The segment store of `config`, or null (with the reason in the log) if it has none or it
// cannot be made. It opens files again for grouping beneath `root`, as clients' files are.
std::unique_ptr<segstore::SegmentStore> MakeSegmentStore(const IondConfig& config,
                                                         const RootGuard* root,
                                                         const LogSink& log) {
  if (config.segstore.empty()) return nullptr;
  segstore::SegmentStoreOptions options;
  options.location = config.segstore;
  options.size = config.segstore_size;
  options.segment_size = config.segstore_segment_size;
  options.cache_size = config.segstore_cache;
  options.popularity_j = static_cast<uint32_t>(config.segstore_popularity_j);
  options.popularity_k = static_cast<uint32_t>(config.segstore_popularity_k);
  options.idle_seconds = config.segstore_idle;
  auto reopen = [root](const segstore::FileKey& key, const std::string& path,
                       std::unique_ptr<DriverFile>* opened) {
    OpenedFile file;
    Status status = root->Open(path, &file);
    if (!status.ok()) return status;
    if (static_cast<uint64_t>(file.device) != key.device ||
        static_cast<uint64_t>(file.inode) != key.inode) {
      return Status::NotFound(path + " names another file now");
    }
    *opened = PosixFileFromDescriptor(std::move(file.path), file.fd.Release());
    return Status::OK();
  };
  auto store_log = [log](const std::string& line) {
    if (log) log(line);
  };
  std::unique_ptr<segstore::SegmentStore> store;
  Status status = segstore::SegmentStore::Create(options, reopen, store_log,
                                                 segstore::SteadyClock(), &store);
  if (!status.ok()) {
    if (log) {
      log("warning: " + status.message() +
          "; the daemon runs without its segment store and reads go to storage");
    }
    return nullptr;
  }
  store->StartIdleWork();
  return store;
}

}  // namespace

FileService::FileService(const IondConfig& config, RootGuard root, LogSink log)
    : block_size_(config.block_size),
      root_(std::move(root)),
      segment_store_(MakeSegmentStore(config, &root_, log)),
      cache_(config.cache_size, config.block_size),
      io_thread_(&cache_, WriteBackPolicy(config.write_back_high, config.write_back_low),
                 static_cast<int>(config.io_threads)),
      files_(&cache_, &io_thread_, config.block_size, config.prefetch_blocks,
             segment_store_.get()) {}

FileService::~FileService() = default;

Status FileService::Open(const std::string& path, bool need_write,
                         std::shared_ptr<DaemonFile>* file) {
  OpenedFile opened;
  Status status = root_.Open(path, &opened);
  if (!status.ok()) return status;
  return files_.Acquire(std::move(opened), need_write, file);
}

Status FileService::Read(DaemonFile& file, uint64_t offset, uint64_t length, ClientLayout layout,
                         bool prefetch_after, std::string* data) {
  data->clear();
  if (length > net::kMaxDataPerRequest) {
    return Status::InvalidArgument("a read of " + std::to_string(length) +
                                   " bytes exceeds the limit of " +
                                   std::to_string(net::kMaxDataPerRequest) + " per request");
  }
  Status status = CheckRange("read", offset, length);
  if (!status.ok() || length == 0) return status;
  if (offset + length > file.known_size()) {
    // Another writer may have extended the file on storage since the daemon last looked.
    status = file.RefreshKnownSize();
    if (!status.ok()) return status;
  }
  const uint64_t size = file.known_size();
  if (offset >= size) return Status::OK();
  const uint64_t clipped = std::min(length, size - offset);
  data->resize(clipped);
  status = cache_.ReadSpan(file.id(), offset, clipped, data->data());
  if (!status.ok()) {
    data->clear();
    return status;
  }
  if (prefetch_after) QueuePrefetches(file, offset, clipped, layout);
  return Status::OK();
}

void FileService::QueuePrefetches(DaemonFile& file, uint64_t offset, uint64_t length,
                                  ClientLayout layout) {
  const uint64_t depth = file.PrefetchDepthFor(layout.block_size);
  if (depth == 0) return;
  const uint64_t epoch = cache_.InvalidationEpoch(file.id());
  const std::vector<BlockRun> runs = PlanPrefetch(
      offset, length, layout, depth, file.known_size(), block_size_,
      [&](uint64_t index) { return cache_.Contains(file.id(), index); });
  for (const BlockRun& run : runs) {
    PrefetchJob job;
    job.file_id = file.id();
    job.block_index = run.first;
    job.block_count = run.count;
    job.epoch = epoch;
    io_thread_.Enqueue(job);
  }
}

Status FileService::Write(DaemonFile& file, uint64_t offset, const std::string& data) {
  if (!file.writable()) {
    return Status::InvalidArgument(file.path() + ": the daemon may only read this file");
  }
  Status status = CheckRange("write", offset, data.size());
  if (!status.ok()) return status;
  // The cache acknowledges before it writes back: a write storage would refuse fails now.
  if (const auto largest = file.driver_file()->LargestSize();
      largest && !data.empty() && offset + data.size() > *largest) {
    return Status::IOError(file.path() + ": a write at offset " + std::to_string(offset) +
                           " of " + std::to_string(data.size()) + " bytes ends past " +
                           std::to_string(*largest) + ", the largest file its file system " +
                           "holds: " + std::strerror(EFBIG));
  }
  // What the chain below keeps of these bytes (the segment store) goes before the write is
  // acknowledged.
  file.driver_file()->WillChange(offset, data.size());
  BlockMap blocks(block_size_);
  const char* source = data.data();
  blocks.ForEachPiece(offset, data.size(), [&](const BlockPiece& piece) {
    status = cache_.Write(file.id(), piece.index, piece.offset_in_block, piece.length, source);
    source += piece.length;
    return status.ok();
  });
  if (!status.ok()) return status;
  file.GrowKnownSize(offset + data.size());
  io_thread_.Notify();
  return Status::OK();
}

Status FileService::Flush(DaemonFile& file) {
  cache_.FlushFile(file.id());  // failures are recorded by the file, and reported just below
  return file.TakeWriteBackError();
}

Status FileService::Sync(DaemonFile& file) {
  Status status = Flush(file);
  if (status.ok()) status = file.driver_file()->Sync();
  // Even after a failed flush: what other writers put on storage must become visible.
  io_thread_.DropPrefetches(file.id());
  cache_.DropCleanBlocks(file.id());
  return status;
}

Status FileService::Invalidate(DaemonFile& file) {
  io_thread_.DropPrefetches(file.id());
  file.driver_file()->Invalidate();  // copies kept below the cache (the segment store) too
  // The client flushed the daemon before it changed storage itself (set_size, PMPI writes),
  // but other clients may have written since. Writing their bytes back first makes storage's
  // size the file's size, even if it shrank: a size taken with dirty bytes still cached would
  // hide them from reads and Stat.
  Status status = cache_.FlushFile(file.id());
  if (!status.ok()) file.RecordWriteBackError(status);
  cache_.DropCleanBlocks(file.id());
  uint64_t size = 0;
  status = file.driver_file()->GetSize(&size);
  if (status.ok()) file.ResetKnownSize(size);
  return status;
}

Status FileService::Stat(DaemonFile& file, uint64_t* size) {
  Status status = file.RefreshKnownSize();
  if (!status.ok()) return status;
  *size = file.known_size();
  return Status::OK();
}

Status FileService::Close(const std::shared_ptr<DaemonFile>& file) {
  Status status = Flush(*file);
  Status released = files_.Release(file);
  return status.ok() ? released : status;
}

std::vector<std::string> FileService::FlushEverything() {
  cache_.FlushAll();  // failures are recorded by each file
  std::vector<std::string> failures;
  for (const auto& file : files_.OpenFiles()) {
    Status status = file->TakeWriteBackError();
    if (status.ok()) status = file->driver_file()->Sync();
    if (!status.ok()) failures.push_back(file->path() + ": " + status.message());
  }
  return failures;
}

}  // namespace iond
}  // namespace stagio
