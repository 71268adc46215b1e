#include "prefetch/predicted_blocks.h"

#include <algorithm>
#include <unordered_set>

namespace stagio {

namespace {

constexpr size_t kMaxPredictedAccesses = 64;

}  // namespace

size_t PredictionCount(uint64_t depth, uint64_t read_length) {
  return static_cast<size_t>(std::min<uint64_t>(
      kMaxPredictedAccesses, depth / std::max<uint64_t>(read_length, 1) + 1));
}

uint64_t TrustedDepth(uint64_t depth, uint64_t confirmed, uint64_t read_length,
                      uint64_t block_size) {
  const uint64_t step = std::max(read_length, block_size);
  if (confirmed == 0 || step == 0) return 0;
  // Compared by division first, so that the product cannot overflow.
  return confirmed > depth / step ? depth : confirmed * step;
}

std::vector<uint64_t> PredictedBlocks(const std::vector<Access>& predicted, const Access& span,
                                      uint64_t block_size, uint64_t file_size, uint64_t depth) {
  const uint64_t budget = std::max<uint64_t>(1, depth / block_size);
  const uint64_t own_first = span.offset / block_size;
  const uint64_t own_last = span.length ? (span.end() - 1) / block_size : own_first;
  const bool has_own = span.length > 0;
  std::vector<uint64_t> chosen;
  std::unordered_set<uint64_t> seen;
  for (const Access& access : predicted) {
    if (access.length == 0) continue;
    const uint64_t end = std::min(access.end(), file_size);
    if (access.offset >= end) continue;  // at or past the end of file
    for (uint64_t index = access.offset / block_size; index <= (end - 1) / block_size; ++index) {
      if (has_own && index >= own_first && index <= own_last) continue;
      if (!seen.insert(index).second) continue;
      chosen.push_back(index);
      if (chosen.size() >= budget) return chosen;
    }
  }
  return chosen;
}

}  // namespace stagio
