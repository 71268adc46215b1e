#include "prefetch/collective_prefetcher.h"

#include "prefetch/predicted_blocks.h"

namespace stagio {

CollectivePrefetcher::CollectivePrefetcher(const PrefetchConfig& config)
    : config_(config), depth_(config.block_size, config.max_bytes) {}

void CollectivePrefetcher::Configure(const PrefetchConfig& config) {
  const bool restart = config.block_size != config_.block_size;
  config_ = config;
  for (PredictorSelector& selector : selectors_) selector.SetWindow(config.history);
  if (restart) {
    Reset();
    depth_.Restart(config.block_size, config.max_bytes);
  } else {
    depth_.SetBounds(config.block_size, config.max_bytes);
  }
}

void CollectivePrefetcher::Reset() {
  for (PredictorSelector& selector : selectors_) selector.Reset();
}

void CollectivePrefetcher::ResizeRanks(size_t ranks) {
  if (selectors_.size() > ranks) selectors_.erase(selectors_.begin() + ranks, selectors_.end());
  while (selectors_.size() < ranks) selectors_.emplace_back(config_.history);
}

std::vector<std::vector<uint64_t>> CollectivePrefetcher::Propose(const std::vector<Access>& spans,
                                                                 uint64_t file_size) {
  ResizeRanks(spans.size());
  const uint64_t depth = depth_bytes();
  std::vector<std::vector<uint64_t>> proposals(spans.size());
  for (size_t rank = 0; rank < spans.size(); ++rank) {
    const Access& span = spans[rank];
    if (span.length == 0) continue;  // took no part in this read: no step of its pattern
    PredictorSelector& selector = selectors_[rank];
    selector.Observe(span);
    const uint64_t trusted =
        TrustedDepth(depth, selector.confirmed(), span.length, config_.block_size);
    const std::vector<Access> predicted = selector.Predict(PredictionCount(trusted, span.length));
    proposals[rank] = PredictedBlocks(predicted, span, config_.block_size, file_size, trusted);
  }
  return proposals;
}

const char* CollectivePrefetcher::predictor(size_t rank) const {
  return rank < selectors_.size() ? selectors_[rank].current() : "none";
}

}  // namespace stagio
