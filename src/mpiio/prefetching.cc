#include "mpiio/prefetching.h"

#include <map>
#include <utility>
#include <vector>

#include "mpiio/data_path.h"
#include "mpiio/runtime.h"

namespace stagio {

namespace {

// What a file's prefetcher asks of the file (FilePrefetcher::ViewMap): the view's file extents
// of stream bytes [stream_offset, + length), as accesses.
struct ViewStreamMap {
  const FileView& view;
  void operator()(uint64_t stream_offset, uint64_t length, std::vector<Access>* out) const {
    std::vector<Extent> extents;
    view.MapStreamRange(stream_offset, length, &extents);
    for (const Extent& extent : extents) {
      out->push_back(Access{static_cast<uint64_t>(extent.offset), extent.length});
    }
  }
};

// ... and of the cache (FilePrefetcher::IsCached): is this block of the file there already?
struct CachedBlockTest {
  Runtime& runtime;
  uint64_t file_id;
  bool operator()(uint64_t index) const { return runtime.cache().Contains(file_id, index); }
};

}  // namespace

// Queues the blocks in this rank's cache (its own, or its node's) on its I/O thread and sends
// the others to their owners, one hint per owner.
void QueuePrefetches(Runtime& runtime, OpenFile& file, const std::vector<uint64_t>& blocks) {
  if (blocks.empty()) return;
  const uint64_t epoch = runtime.cache().InvalidationEpoch(file.id);
  std::map<int, std::vector<uint64_t>> by_owner;
  for (uint64_t index : blocks) {
    if (!file.collective() || file.owners.LocalTo(index, file.comm_rank)) {
      runtime.io_thread().Enqueue(PrefetchJob{file.id, index, epoch});
    } else {
      by_owner[file.owners.OwnerOf(index)].push_back(index);
    }
  }
  for (const auto& [owner, owned] : by_owner) file.prefetch_hints.Send(file.comm, owner, owned);
}

namespace {

bool Readable(const OpenFile& file) {
  return (file.amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR)) != 0;
}

}  // namespace

PrefetchConfig PrefetchConfigOf(const Settings& settings) {
  PrefetchConfig config;
  config.mode = PrefetchModeFromName(settings.prefetch);
  config.block_size = settings.block_size;
  config.history = static_cast<size_t>(settings.history);
  config.max_bytes = settings.prefetch_max;
  return config;
}

bool UsesCollectivePrefetch(const OpenFile& file) {
  if (!file.collective()) return false;
  const PrefetchMode mode = PrefetchModeFromName(file.settings.prefetch);
  return mode == PrefetchMode::kCollective || mode == PrefetchMode::kAuto;
}

ReadPrefetch PlanPrefetchForRead(Runtime& runtime, OpenFile& file, const Transfer& transfer,
                                 uint64_t bytes) {
  ReadPrefetch result;
  if (bytes == 0) return result;
  // A pre-execution helper fetches this file's reads, exactly: misses fetch only what they ask.
  if (file.preexec_helpers.load() > 0) {
    result.scope = FetchScope::kRequestedBytes;
    return result;
  }
  const FileView& view = file.view;
  // The span from the first to the last file byte of the read: one access of the history.
  const uint64_t first = static_cast<uint64_t>(view.ByteOffsetOfStream(transfer.stream_begin));
  const uint64_t last =
      static_cast<uint64_t>(view.ByteOffsetOfStream(transfer.stream_begin + bytes - 1));
  const Access span{first, last + 1 - first};
  const uint64_t stream_end = transfer.stream_begin + bytes;
  PrefetchPlan plan = file.backend->prefetcher().PlanRead(
      span, stream_end, file.backend->known_size(), ViewStreamMap{view},
      CachedBlockTest{runtime, file.id});
  result.scope = plan.scope;
  result.blocks = std::move(plan.blocks);
  return result;
}

void PrefetchAfterSetView(Runtime& runtime, OpenFile& file) {
  FilePrefetcher& prefetcher = file.backend->prefetcher();
  prefetcher.OnViewChanged(file.view.is_contiguous());
  // The collective prefetcher keeps its histories: they are file byte ranges, which a new view
  // does not move (a tile reader sets one view per frame, and the frames are its pattern). A
  // real break shows as two misses in a row, after which it predicts nothing.
  if (!Readable(file) || file.passthrough() || file.preexec_helpers.load() > 0) return;
  QueuePrefetches(runtime, file,
                  prefetcher.PlanAfterView(file.backend->known_size(),
                                           ViewStreamMap{file.view},
                                           CachedBlockTest{runtime, file.id}));
}

}  // namespace stagio
