#include "prefetch/adaptive_depth.h"

#include <algorithm>
#include <limits>

namespace stagio {

AdaptiveDepth::AdaptiveDepth(uint64_t min_bytes, uint64_t initial_bytes, uint64_t max_bytes) {
  SetBounds(min_bytes, max_bytes);
  Set(initial_bytes);
}

void AdaptiveDepth::OnUsedInTime() {
  // A step of at least one byte, so that min_bytes 0 does not freeze growth above 0.
  const uint64_t step = std::max<uint64_t>(min_bytes_, 1);
  const uint64_t room = std::numeric_limits<uint64_t>::max() - bytes_;
  Set(bytes_ + std::min(step, room));
}

void AdaptiveDepth::OnWasted() { Set(bytes_ - bytes_ / 2); }

void AdaptiveDepth::OnLate() { Set(bytes_ - bytes_ / 4); }

void AdaptiveDepth::SetBounds(uint64_t min_bytes, uint64_t max_bytes) {
  min_bytes_ = min_bytes;
  max_bytes_ = std::max(min_bytes, max_bytes);
  Set(bytes_);
}

void AdaptiveDepth::Set(uint64_t bytes) { bytes_ = std::clamp(bytes, min_bytes_, max_bytes_); }

}  // namespace stagio
