#include "prefetch/file_prefetcher.h"

#include <algorithm>

#include "prefetch/predicted_blocks.h"

namespace stagio {

PrefetchMode PrefetchModeFromName(const std::string& name) {
  if (name == "none") return PrefetchMode::kNone;
  if (name == "individual") return PrefetchMode::kIndividual;
  if (name == "view") return PrefetchMode::kView;
  if (name == "collective") return PrefetchMode::kCollective;
  return PrefetchMode::kAuto;
}

FilePrefetcher::FilePrefetcher(const PrefetchConfig& config)
    : config_(config), selector_(config.history), depth_(config.block_size, config.max_bytes) {}

void FilePrefetcher::Configure(const PrefetchConfig& config) {
  const bool restart = config.block_size != config_.block_size || config.mode != config_.mode;
  config_ = config;
  selector_.SetWindow(config.history);
  if (restart) {
    selector_.Reset();
    depth_.Restart(config.block_size, config.max_bytes);
  } else {
    depth_.SetBounds(config.block_size, config.max_bytes);
  }
}

void FilePrefetcher::OnViewChanged(bool view_is_contiguous) {
  view_is_contiguous_ = view_is_contiguous;
  selector_.Reset();
}

bool FilePrefetcher::UsesView() const {
  const bool automatic =
      config_.mode == PrefetchMode::kAuto || config_.mode == PrefetchMode::kCollective;
  return config_.mode == PrefetchMode::kView || (automatic && !view_is_contiguous_);
}

void FilePrefetcher::OnOutcome(PrefetchOutcome outcome) { depth_.OnOutcome(outcome); }

uint64_t FilePrefetcher::depth_bytes() const { return depth_.bytes(); }

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
  uint64_t depth = depth_bytes();
  std::vector<Access> predicted;
  if (UsesView()) {
    view(stream_end, depth, &predicted);
  } else {
    selector_.Observe(span);
    depth = TrustedDepth(depth, selector_.confirmed(), span.length, config_.block_size);
    predicted = selector_.Predict(PredictionCount(depth, span.length));
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
  std::vector<uint64_t> blocks =
      PredictedBlocks(predicted, span, config_.block_size, file_size, depth);
  blocks.erase(std::remove_if(blocks.begin(), blocks.end(), [&](uint64_t b) { return cached(b); }),
               blocks.end());
  return blocks;
}

}  // namespace stagio
