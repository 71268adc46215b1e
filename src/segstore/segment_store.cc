#include "segstore/segment_store.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace stagio {
namespace segstore {

Status SegmentStore::Create(const SegmentStoreOptions& options, FileOpener opener, StoreLog log,
                            Clock* clock, std::unique_ptr<SegmentStore>* store) {
  std::unique_ptr<SegmentArea> area;
  Status status = SegmentArea::Open(options.location, options.size, options.segment_size, &area);
  if (!status.ok()) return status;
  store->reset(new SegmentStore(options, std::move(area), std::move(opener), std::move(log),
                                clock));
  return Status::OK();
}

SegmentStore::SegmentStore(const SegmentStoreOptions& options, std::unique_ptr<SegmentArea> area,
                           FileOpener opener, StoreLog log, Clock* clock)
    : options_(options),
      area_(std::move(area)),
      opener_(std::move(opener)),
      log_(log ? std::move(log) : StoreLog([](const std::string&) {})),
      idle_(clock),
      graph_(options.popularity_j, options.popularity_k, options.max_extents),
      cache_(options.cache_size),
      slots_(area_->slot_count()) {
  // Lowest slots first, so a store that is never full stays at the front of its file.
  for (uint32_t slot = area_->slot_count(); slot > 0; --slot) free_slots_.push_back(slot - 1);
}

SegmentStore::~SegmentStore() {
  {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SegmentStore::StartIdleWork() {
  const auto interval = std::chrono::duration<double>(
      std::clamp(options_.idle_seconds / 5, 0.01, 1.0));
  thread_ = std::thread([this, interval] {
    std::unique_lock<std::mutex> lock(thread_mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, interval);
      if (stopping_) break;
      lock.unlock();
      GroupIfIdle();
      lock.lock();
    }
  });
}

void SegmentStore::Track(const FileKey& file, const std::string& path,
                         std::optional<FileVersion> version) {
  std::lock_guard<std::mutex> lock(mutex_);
  FileState& state = files_[file];
  state.path = path;
  if (state.version != version) {
    DropFileLocked(file);
    state.version = version;
  }
}

Status SegmentStore::Read(const FileKey& file, DriverFile* storage, uint64_t offset,
                          void* buffer, size_t length, size_t* bytes_read) {
  IdleTracker::Scope demand(&idle_);
  graph_.Record(Extent{file, offset, length});
  SegmentStoreStats::Add(stats_.reads);
  const bool after_first_group = stats_.segments_written.load() > 0;
  if (after_first_group) SegmentStoreStats::Add(stats_.reads_after_first_group);
  std::vector<Span> spans;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    spans = table_.Resolve(file, offset, length);
  }
  char* const out = static_cast<char*>(buffer);
  uint64_t from_segments = 0;
  uint64_t from_storage = 0;
  Status status;
  *bytes_read = length;
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& span = spans[i];
    char* destination = out + (span.offset - offset);
    if (span.placed && CopyFromSegment(*span.placed, span.length, destination)) {
      from_segments += span.length;
      continue;
    }
    size_t got = 0;
    status = storage->ReadAt(span.offset, destination, span.length, &got);
    from_storage += got;
    if (!status.ok() || got < span.length) {
      *bytes_read = span.offset - offset + got;
      // Storage ends before bytes a segment holds: the file shrank behind the daemon.
      const bool placed_beyond = std::any_of(spans.begin() + static_cast<ptrdiff_t>(i) + 1,
                                             spans.end(), [](const Span& s) { return s.placed; });
      if (status.ok() && placed_beyond) DropFile(file);
      break;
    }
  }
  SegmentStoreStats::Add(stats_.bytes_from_segments, from_segments);
  SegmentStoreStats::Add(stats_.bytes_from_storage, from_storage);
  if (from_segments > 0 && from_storage == 0 && status.ok()) {
    SegmentStoreStats::Add(stats_.read_hits);
    if (after_first_group) SegmentStoreStats::Add(stats_.read_hits_after_first_group);
  } else if (from_segments > 0) {
    SegmentStoreStats::Add(stats_.read_partial_hits);
  } else {
    SegmentStoreStats::Add(stats_.read_misses);
  }
  return status;
}

bool SegmentStore::CopyFromSegment(const Placement& placement, uint64_t length,
                                   char* destination) {
  const uint32_t slot = placement.segment;
  SegmentBytes bytes;
  uint64_t epoch = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // One reader loads a segment; the others wait for it rather than read it again.
    loaded_.wait(lock, [&] { return !slots_[slot].loading; });
    // Gone, or reused for another segment, since the read looked the piece up.
    if (!slots_[slot].used || slots_[slot].epoch != placement.epoch) return false;
    slots_[slot].last_used = ++tick_;
    epoch = slots_[slot].epoch;
    bytes = cache_.Get(slot);
    if (!bytes) slots_[slot].loading = true;
  }
  if (bytes) {
    SegmentStoreStats::Add(stats_.segment_cache_hits);
  } else {
    auto loaded = std::make_shared<std::string>();
    Status status = area_->Read(slot, loaded.get());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slots_[slot].loading = false;
      loaded_.notify_all();
      if (slots_[slot].epoch != epoch) return false;  // dropped while it was read
      if (status.ok()) {
        SegmentStoreStats::Add(stats_.segment_loads);
        bytes = std::move(loaded);
        cache_.Put(slot, bytes);
      } else {
        SegmentStoreStats::Add(stats_.corrupt_segments);
        DropSegmentLocked(slot);
      }
    }
    if (!status.ok()) {
      log_(status.message() + "; the segment is dropped and its bytes read from storage");
      return false;
    }
  }
  if (placement.offset_in_segment + length > bytes->size()) return false;
  std::memcpy(destination, bytes->data() + placement.offset_in_segment, length);
  return true;
}

void SegmentStore::Invalidate(const FileKey& file, uint64_t offset, uint64_t length) {
  std::lock_guard<std::mutex> lock(mutex_);
  InvalidateLocked(file, table_.SegmentsTouching(file, offset, length));
}

void SegmentStore::Rewritten(const FileKey& file, uint64_t offset, uint64_t length,
                             std::optional<FileVersion> version) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A grouping run that began after the Invalidate may have read the old bytes and kept them.
  InvalidateLocked(file, table_.SegmentsTouching(file, offset, length));
  files_[file].version = version;
}

void SegmentStore::DropFile(const FileKey& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  DropFileLocked(file);
}

void SegmentStore::DropFileLocked(const FileKey& file) {
  InvalidateLocked(file, table_.SegmentsOf(file));
}

void SegmentStore::InvalidateLocked(const FileKey& file, const std::vector<uint32_t>& slots) {
  for (uint32_t slot : slots) {
    DropSegmentLocked(slot);
    SegmentStoreStats::Add(stats_.invalidated_segments);
  }
  ++files_[file].generation;
}

void SegmentStore::DropSegmentLocked(uint32_t slot) {
  if (!slots_[slot].used) return;
  // A segment holds pieces of several files when its group spans them: all of them go.
  table_.RemoveSegment(slot);
  cache_.Erase(slot);
  area_->Forget(slot);
  slots_[slot].used = false;
  ++slots_[slot].epoch;
  free_slots_.push_back(slot);
}

uint32_t SegmentStore::segments_held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return HeldLocked();
}

uint32_t SegmentStore::HeldLocked() const {
  return static_cast<uint32_t>(slots_.size() - free_slots_.size());
}

nlohmann::json SegmentStore::StatsJson() const {
  nlohmann::json stats = stats_.ToJson();
  stats["location"] = area_->path();
  stats["segment_size"] = options_.segment_size;
  stats["segments_held"] = segments_held();
  stats["capacity_segments"] = area_->slot_count();
  return stats;
}

}  // namespace segstore
}  // namespace stagio
