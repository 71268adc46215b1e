#include "cache/dirty_range_map.h"

#include <algorithm>

namespace stagio {

void DirtyRangeMap::Add(uint64_t begin, uint64_t end) {
  if (begin >= end) return;
  // Start from the first range that could touch [begin, end): the one before `begin`, if it
  // reaches it.
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second >= begin) --it;
  while (it != ranges_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(begin, end);
}

void DirtyRangeMap::Subtract(uint64_t begin, uint64_t end) {
  if (begin >= end) return;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second > begin) --it;
  while (it != ranges_.end() && it->first < end) {
    const uint64_t range_begin = it->first;
    const uint64_t range_end = it->second;
    it = ranges_.erase(it);
    if (range_begin < begin) ranges_.emplace(range_begin, begin);
    if (range_end > end) ranges_.emplace(end, range_end);
  }
}

bool DirtyRangeMap::Covers(uint64_t begin, uint64_t end) const {
  if (begin >= end) return true;
  auto it = ranges_.upper_bound(begin);
  if (it == ranges_.begin()) return false;
  --it;
  return it->first <= begin && it->second >= end;
}

std::vector<DirtyRangeMap::Range> DirtyRangeMap::Gaps(uint64_t begin, uint64_t end) const {
  std::vector<Range> gaps;
  if (begin >= end) return gaps;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin() && std::prev(it)->second > begin) --it;
  uint64_t cursor = begin;
  for (; it != ranges_.end() && it->first < end; ++it) {
    if (it->first > cursor) gaps.emplace_back(cursor, it->first);
    cursor = std::max(cursor, it->second);
  }
  if (cursor < end) gaps.emplace_back(cursor, end);
  return gaps;
}

uint64_t DirtyRangeMap::TotalBytes() const {
  uint64_t total = 0;
  for (const auto& [begin, end] : ranges_) total += end - begin;
  return total;
}

}  // namespace stagio
