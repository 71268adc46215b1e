#include "prefetch/prefetch_depth.h"

#include <algorithm>

namespace stagio {

namespace {

constexpr uint64_t kInitialBlocks = 2;

AdaptiveDepth InitialDepth(uint64_t block_size, uint64_t max_bytes) {
  const uint64_t bound = std::max(max_bytes, block_size);
  return AdaptiveDepth(block_size, std::min(kInitialBlocks * block_size, bound), bound);
}

}  // namespace

PrefetchDepth::PrefetchDepth(uint64_t block_size, uint64_t max_bytes)
    : depth_(InitialDepth(block_size, max_bytes)) {}

void PrefetchDepth::Restart(uint64_t block_size, uint64_t max_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  depth_ = InitialDepth(block_size, max_bytes);
}

void PrefetchDepth::SetBounds(uint64_t block_size, uint64_t max_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  depth_.SetBounds(block_size, std::max(max_bytes, block_size));
}

void PrefetchDepth::OnOutcome(PrefetchOutcome outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
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

uint64_t PrefetchDepth::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return depth_.bytes();
}

}  // namespace stagio
