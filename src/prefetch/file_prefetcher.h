// FilePrefetcher: decides, at each read of one file handle, which blocks to fetch ahead.
//
// Two sources of predictions (setting stagio_prefetch):
//  - individual: the pattern predictors (PredictorSelector) over this handle's reads, one
//    Access per read call, spanning the call's first to last file byte;
//  - view: the file view itself (seed 004, V-D): the bytes the view's stream holds after this
//    read are the ones an individual-pointer reader reads next;
//  - auto: the view when it is non-contiguous (a declared pattern beats a learned one),
//    patterns otherwise; none: nothing.
// Predictions are turned into blocks by PredictedBlocks (nearest first, without the read's own
// blocks and those at or past the end of file, until the adaptive depth, in bytes and bounded by
// stagio_prefetch_max, is covered); cached blocks count towards the depth but are not fetched
// again.
//
// What a miss fetches follows from the same knowledge: with a prediction in hand the whole
// block is worth reading (its neighbours are coming), without one only the bytes asked for, so
// that random access costs what it costs without stagio. With prefetching off (none) misses
// fetch only the bytes asked for too: none means no read-ahead of any kind, not even to the
// end of the block.
//
// Threading: Plan* and Configure run on the application thread. OnOutcome may come from any
// thread, with a cache lock held, so it touches only the depth (PrefetchDepth, under its own
// mutex), and Plan* never holds that mutex while it calls back into the cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "common/function_ref.h"
#include "prefetch/access_history.h"
#include "prefetch/prefetch_depth.h"
#include "prefetch/predictor_selector.h"

namespace stagio {

// kCollective plans collective reads at the aggregators (CollectivePrefetcher); for this
// handle's other reads it acts as kAuto.
enum class PrefetchMode { kNone, kIndividual, kView, kCollective, kAuto };

// "none", "individual", "view", "collective", "auto" (as validated by the configuration);
// anything else is kAuto.
PrefetchMode PrefetchModeFromName(const std::string& name);

struct PrefetchConfig {
  PrefetchMode mode = PrefetchMode::kAuto;
  uint64_t block_size = 1 << 20;
  size_t history = AccessHistory::kDefaultWindow;
  uint64_t max_bytes = 16ull << 20;  // the depth bound
};

struct PrefetchPlan {
  FetchScope scope = FetchScope::kWholeBlock;  // what this read's misses fetch
  std::vector<uint64_t> blocks;                // to prefetch, nearest first; none is cached
};

class FilePrefetcher {
 public:
  // Appends the file extents (as Access) of view stream bytes [stream_offset, + length).
  using ViewMap = FunctionRef<void(uint64_t stream_offset, uint64_t length, std::vector<Access>*)>;
  using IsCached = FunctionRef<bool(uint64_t block_index)>;

  explicit FilePrefetcher(const PrefetchConfig& config);

  // New settings (set_info, set_view hints). A new block size or mode restarts learning.
  void Configure(const PrefetchConfig& config);
  // A new view: what the old one taught about access patterns no longer applies.
  void OnViewChanged(bool view_is_contiguous);

  // A read of `span` (its first to last file byte) whose view stream ends at `stream_end`.
  PrefetchPlan PlanRead(const Access& span, uint64_t stream_end, uint64_t file_size,
                        ViewMap view, IsCached cached);
  // Right after set_view, before any read: the view's first blocks, if the view is the
  // source of predictions. Empty otherwise.
  std::vector<uint64_t> PlanAfterView(uint64_t file_size, ViewMap view, IsCached cached);

  void OnOutcome(PrefetchOutcome outcome);
  uint64_t depth_bytes() const;
  const char* predictor() const;  // the pattern predictor believed now, "view" or "none"

 private:
  bool UsesView() const;
  // The PredictedBlocks of `predicted` that are not cached.
  std::vector<uint64_t> ChooseBlocks(const std::vector<Access>& predicted, const Access& span,
                                     uint64_t file_size, uint64_t depth, IsCached cached) const;

  PrefetchConfig config_;
  bool view_is_contiguous_ = true;
  PredictorSelector selector_;
  PrefetchDepth depth_;
};

}  // namespace stagio
