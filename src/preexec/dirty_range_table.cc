#include "preexec/dirty_range_table.h"

#include <algorithm>
#include <iterator>

namespace stagio {

void DirtyRangeTable::Erase(uint64_t begin, uint64_t end) {
  // The first range that could overlap starts before `begin`: step back one.
  auto it = ranges_.lower_bound(begin);
  if (it != ranges_.begin()) --it;
  while (it != ranges_.end() && it->first < end) {
    const uint64_t range_begin = it->first;
    const Tail tail = it->second;
    if (tail.end <= begin) {
      ++it;
      continue;
    }
    it = ranges_.erase(it);
    if (range_begin < begin) ranges_[range_begin] = Tail{begin, tail.sequence};
    if (tail.end > end) ranges_[end] = Tail{tail.end, tail.sequence};
  }
}

void DirtyRangeTable::Record(uint64_t begin, uint64_t end, uint64_t sequence) {
  if (begin >= end) return;
  Erase(begin, end);
  // Merge with touching ranges of the same write (a write through a view records its extents
  // one by one).
  auto next = ranges_.find(end);
  if (next != ranges_.end() && next->second.sequence == sequence) {
    end = next->second.end;
    ranges_.erase(next);
  }
  auto it = ranges_.lower_bound(begin);
  if (it != ranges_.begin()) {
    auto previous = std::prev(it);
    if (previous->second.end == begin && previous->second.sequence == sequence) {
      previous->second.end = end;
      return;
    }
  }
  ranges_[begin] = Tail{end, sequence};
}

uint64_t DirtyRangeTable::NewestWriteOverlapping(uint64_t begin, uint64_t end) const {
  uint64_t newest = 0;
  if (begin >= end) return newest;
  auto it = ranges_.lower_bound(begin);
  if (it != ranges_.begin()) --it;
  for (; it != ranges_.end() && it->first < end; ++it) {
    if (it->second.end > begin) newest = std::max(newest, it->second.sequence);
  }
  return newest;
}

void DirtyRangeTable::ReleaseThrough(uint64_t sequence) {
  for (auto it = ranges_.begin(); it != ranges_.end();) {
    if (it->second.sequence <= sequence) {
      it = ranges_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<DirtyRangeTable::Range> DirtyRangeTable::Ranges() const {
  std::vector<Range> out;
  out.reserve(ranges_.size());
  for (const auto& [begin, tail] : ranges_) out.push_back(Range{begin, tail.end, tail.sequence});
  return out;
}

}  // namespace stagio
