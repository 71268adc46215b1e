#include "prefetch/file_prefetcher.h"

#include <algorithm>
#include <unordered_set>

namespace stagio {

namespace {

// A new stream starts two blocks ahead: one to hide the next read, one in case reads come
// faster than a block's fetch. The adaptive depth takes it from there.
constexpr uint64_t kInitialBlocks = 2;
// Pattern predictions asked for per read, at most: enough to fill the deepest depth with
// small reads, without predicting for ever when reads are tiny.
constexpr size_t kMaxPredictedAccesses = 64;

AdaptiveDepth MakeDepth(const PrefetchConfig& config) {
  const uint64_t block = config.block_size;
  const uint64_t max_bytes = std::max(config.max_bytes, block);
  return AdaptiveDepth(block, std::min(kInitialBlocks * block, max_bytes), max_bytes);
}

}  // namespace

PrefetchMode PrefetchModeFromName(const std::string& name) {
  if (name == "none") return PrefetchMode::kNone;
  if (name == "individual") return PrefetchMode::kIndividual;
  if (name == "view") return PrefetchMode::kView;
  return PrefetchMode::kAuto;
}

FilePrefetcher::FilePrefetcher(const PrefetchConfig& config)
    : config_(config), selector_(config.history), depth_(MakeDepth(config)) {}

void FilePrefetcher::Configure(const PrefetchConfig& config) {
  const bool restart = config.block_size != config_.block_size || config.mode != config_.mode;
  config_ = config;
  selector_.SetWindow(config.history);
  std::lock_guard<std::mutex> lock(depth_mutex_);
  if (restart) {
    selector_.Reset();
    depth_ = MakeDepth(config);
  } else {
    depth_.SetBounds(config.block_size, std::max(config.max_bytes, config.block_size));
  }
}

void FilePrefetcher::OnViewChanged(bool view_is_contiguous) {
  view_is_contiguous_ = view_is_contiguous;
  selector_.Reset();
}

bool FilePrefetcher::UsesView() const {
  return config_.mode == PrefetchMode::kView ||
         (config_.mode == PrefetchMode::kAuto && !view_is_contiguous_);
}

void FilePrefetcher::OnOutcome(PrefetchOutcome outcome) {
  std::lock_guard<std::mutex> lock(depth_mutex_);
  switch (outcome) {
    case PrefetchOutcome::kUsedInTime:
    case PrefetchOutcome::kUsedAfterWait:  // right, but not early enough: go deeper
      depth_.OnUsedInTime();
      break;
    case PrefetchOutcome::kOvertaken:
      depth_.OnLate();
      break;
    case PrefetchOutcome::kWasted:
      depth_.OnWasted();
      break;
  }
}

uint64_t FilePrefetcher::depth_bytes() const {
  std::lock_guard<std::mutex> lock(depth_mutex_);
  return depth_.bytes();
}

const char* FilePrefetcher::predictor() const {
  if (config_.mode == PrefetchMode::kNone) return "none";
  return UsesView() ? "view" : selector_.current();
}

PrefetchPlan FilePrefetcher::PlanRead(const Access& span, uint64_t stream_end,
                                      uint64_t file_size, ViewMap view, IsCached cached) {
  PrefetchPlan plan;
  if (span.length == 0) return plan;
  if (config_.mode == PrefetchMode::kNone) {
    plan.scope = FetchScope::kRequestedBytes;  // no read-ahead of any kind
    return plan;
  }
  const uint64_t depth = depth_bytes();
  std::vector<Access> predicted;
  if (UsesView()) {
    view(stream_end, depth, &predicted);
  } else {
    selector_.Observe(span);
    const size_t count = static_cast<size_t>(
        std::min<uint64_t>(kMaxPredictedAccesses, depth / std::max<uint64_t>(span.length, 1) + 1));
    predicted = selector_.Predict(count);
  }
  if (predicted.empty()) {
    plan.scope = FetchScope::kRequestedBytes;
    return plan;
  }
  plan.blocks = ChooseBlocks(predicted, span, file_size, depth, cached);
  return plan;
}

std::vector<uint64_t> FilePrefetcher::PlanAfterView(uint64_t file_size, ViewMap view,
                                                    IsCached cached) {
  if (!UsesView()) return {};
  std::vector<Access> predicted;
  const uint64_t depth = depth_bytes();
  view(0, depth, &predicted);
  return ChooseBlocks(predicted, Access{}, file_size, depth, cached);
}

std::vector<uint64_t> FilePrefetcher::ChooseBlocks(const std::vector<Access>& predicted,
                                                   const Access& span, uint64_t file_size,
                                                   uint64_t depth, IsCached cached) const {
  const uint64_t block = config_.block_size;
  const uint64_t budget = std::max<uint64_t>(1, depth / block);
  // The read's own blocks are its business (it is about to fetch them).
  const uint64_t own_first = span.offset / block;
  const uint64_t own_last = span.length ? (span.end() - 1) / block : own_first;
  const bool has_own = span.length > 0;
  std::vector<uint64_t> chosen;
  std::unordered_set<uint64_t> seen;
  uint64_t counted = 0;
  for (const Access& access : predicted) {
    if (access.length == 0) continue;
    const uint64_t end = std::min(access.end(), file_size);
    if (access.offset >= end) continue;  // at or past the end of file: nothing to fetch
    for (uint64_t index = access.offset / block; index <= (end - 1) / block; ++index) {
      if (has_own && index >= own_first && index <= own_last) continue;
      if (!seen.insert(index).second) continue;
      if (!cached(index)) chosen.push_back(index);
      if (++counted >= budget) return chosen;
    }
  }
  return chosen;
}

}  // namespace stagio
