// SegmentStore's idle-time work: a grouping run (segment_store.h).
#include <algorithm>

#include "segstore/segment_store.h"

namespace stagio {
namespace segstore {

bool SegmentStore::ShouldYield(uint64_t demand) const {
  return stopping_ || idle_.begun() != demand;
}

bool SegmentStore::GroupIfIdle() {
  // Read before the idle check: a request that begins after it makes the run yield.
  const uint64_t demand = idle_.begun();
  if (!idle_.IdleFor(options_.idle_seconds)) return false;
  const uint64_t recorded = graph_.recorded();
  uint64_t read_after = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (write_failed_ || recorded == recorded_at_last_run_) return false;
    read_after = recorded_at_last_run_;
    run_slots_.clear();
  }
  const std::vector<std::vector<Extent>> groups = FindGroups(graph_.Snapshot(), read_after);
  std::vector<SegmentPlan> plans;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    plans = PackGroups(groups, options_.segment_size,
                       [&](const Extent& extent) { return table_.UnplacedParts(extent); });
  }
  std::map<FileKey, Source> sources;
  for (const SegmentPlan& plan : plans) {
    const PlanOutcome outcome = WritePlan(plan, demand, &sources);
    if (outcome == PlanOutcome::kYielded) {
      SegmentStoreStats::Add(stats_.grouping_yields);
      return false;
    }
    if (outcome == PlanOutcome::kFailed) return false;
    if (outcome == PlanOutcome::kFull) break;  // the store holds this run's newest groups
  }
  // A file found at another version than the store knew (changed behind the daemon, or two
  // of its writes finishing out of order) is tracked at its new version now, and its groups
  // were skipped: the next idle check runs again for them rather than forget what was read.
  const bool any_changed = std::any_of(sources.begin(), sources.end(),
                                       [](const auto& entry) { return entry.second.changed; });
  if (any_changed) {
    SegmentStoreStats::Add(stats_.grouping_retries);
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  recorded_at_last_run_ = recorded;
  SegmentStoreStats::Add(stats_.grouping_runs);
  return true;
}

SegmentStore::Source& SegmentStore::SourceFor(const FileKey& file,
                                              std::map<FileKey, Source>* sources) {
  auto found = sources->find(file);
  if (found != sources->end()) return found->second;
  Source& source = (*sources)[file];
  std::string path;
  std::optional<FileVersion> tracked;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const FileState& state = files_[file];
    path = state.path;
    tracked = state.version;
    source.generation = state.generation;
  }
  if (path.empty() || !tracked || !opener_(file, path, &source.file).ok()) return source;
  const std::optional<FileVersion> now = source.file->Version();
  if (!now) return source;
  if (*now != *tracked) {
    // Changed behind the daemon since it was read: what the store holds of it is stale, and
    // the run's extents may no longer be what readers want. The next run starts afresh.
    Track(file, path, now);
    source.changed = true;
    return source;
  }
  source.version = *now;
  source.usable = true;
  return source;
}

bool SegmentStore::TakeSlotLocked(const std::vector<uint32_t>& keep, uint32_t* slot) {
  if (!free_slots_.empty()) {
    *slot = free_slots_.back();
    free_slots_.pop_back();
    return true;
  }
  // Full: the least recently used segment goes, unless this run wrote it.
  int64_t oldest = -1;
  for (uint32_t candidate = 0; candidate < slots_.size(); ++candidate) {
    if (!slots_[candidate].used) continue;
    if (std::find(keep.begin(), keep.end(), candidate) != keep.end()) continue;
    if (oldest < 0 || slots_[candidate].last_used < slots_[static_cast<size_t>(oldest)].last_used) {
      oldest = candidate;
    }
  }
  if (oldest < 0) return false;
  DropSegmentLocked(static_cast<uint32_t>(oldest));
  SegmentStoreStats::Add(stats_.evicted_segments);
  *slot = free_slots_.back();
  free_slots_.pop_back();
  return true;
}

SegmentStore::PlanOutcome SegmentStore::WritePlan(const SegmentPlan& plan, uint64_t demand,
                                                  std::map<FileKey, Source>* sources) {
  std::string data;
  data.reserve(plan.bytes);
  std::vector<Extent> pieces;
  for (const Extent& piece : plan.pieces) {
    if (ShouldYield(demand)) return PlanOutcome::kYielded;
    Source& source = SourceFor(piece.file, sources);
    if (!source.usable) continue;
    const size_t at = data.size();
    data.resize(at + piece.length);
    size_t got = 0;
    Status status = source.file->ReadAt(piece.offset, data.data() + at, piece.length, &got);
    if (!status.ok()) got = 0;
    data.resize(at + got);
    if (got > 0) pieces.push_back(Extent{piece.file, piece.offset, got});
  }
  if (pieces.empty()) return PlanOutcome::kDiscarded;
  // The bytes are only worth keeping if no file changed while they were read.
  for (const Extent& piece : pieces) {
    const Source& source = sources->at(piece.file);
    const std::optional<FileVersion> now = source.file->Version();
    if (!now || *now != source.version) return PlanOutcome::kDiscarded;
  }
  uint32_t slot = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!TakeSlotLocked(run_slots_, &slot)) return PlanOutcome::kFull;
  }
  Status status = area_->Write(slot, data);
  if (!status.ok()) {
    uint32_t held = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_slots_.push_back(slot);
      write_failed_ = true;
      held = HeldLocked();
    }
    SegmentStoreStats::Add(stats_.write_errors);
    log_(status.message() + "; the segment store stops grouping, and serves only the " +
         std::to_string(held) + " segments it holds");
    return PlanOutcome::kFailed;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  bool current = true;
  for (const Extent& piece : pieces) {
    const Source& source = sources->at(piece.file);
    const FileState& state = files_[piece.file];
    current = current && state.generation == source.generation && state.version &&
              *state.version == source.version;
    for (const Span& span : table_.Resolve(piece.file, piece.offset, piece.length)) {
      current = current && !span.placed;
    }
  }
  if (!current) {
    area_->Forget(slot);
    free_slots_.push_back(slot);
    return PlanOutcome::kDiscarded;
  }
  slots_[slot].used = true;
  slots_[slot].last_used = ++tick_;
  const uint64_t epoch = ++slots_[slot].epoch;
  uint64_t offset_in_segment = 0;
  for (const Extent& piece : pieces) {
    table_.Insert(piece.file, piece.offset, piece.length,
                  Placement{slot, offset_in_segment, epoch});
    offset_in_segment += piece.length;
  }
  run_slots_.push_back(slot);
  // The group was just read: it starts in memory too (seed 002 §3.4.1, step 5).
  cache_.Put(slot, std::make_shared<const std::string>(std::move(data)));
  SegmentStoreStats::Add(stats_.segments_written);
  SegmentStoreStats::Add(stats_.bytes_grouped, offset_in_segment);
  return PlanOutcome::kWritten;
}

}  // namespace segstore
}  // namespace stagio
