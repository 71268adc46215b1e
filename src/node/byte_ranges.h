// ByteRanges: a small, fixed-capacity set of byte ranges inside one block, kept sorted and
// merged, with no pointers, so that it can live in memory shared by several processes.
//
// The node cache keeps two per block: the bytes whose content is known (valid) and the bytes
// written but not yet on storage (dirty). A full set refuses a new range (Add returns false)
// rather than approximate: a valid set that claimed unknown bytes would return wrong data, and
// a dirty set that grew over clean bytes would write them back over another node's writes. The
// table decides what to do instead (NodeBlockTable): widen a fetch over a short gap so that it
// merges with its neighbours, forget clean ranges, smallest first, or write dirty ones back.
#pragma once

#include <algorithm>
#include <cstdint>

namespace stagio {

class ByteRanges {
 public:
  static constexpr int kCapacity = 8;

  struct Range {
    uint32_t begin;
    uint32_t end;  // exclusive
  };

  bool empty() const { return count_ == 0; }
  int count() const { return count_; }
  const Range& at(int i) const { return ranges_[i]; }
  void Clear() { count_ = 0; }

  uint64_t Bytes() const {
    uint64_t bytes = 0;
    for (int i = 0; i < count_; ++i) bytes += ranges_[i].end - ranges_[i].begin;
    return bytes;
  }

  // True if every byte of [begin, end) is in the set (an empty range always is).
  bool Covers(uint32_t begin, uint32_t end) const {
    if (begin >= end) return true;
    for (int i = 0; i < count_; ++i) {
      if (ranges_[i].begin <= begin && end <= ranges_[i].end) return true;
    }
    return false;
  }

  // True if some byte of [begin, end) is in the set.
  bool Overlaps(uint32_t begin, uint32_t end) const {
    for (int i = 0; i < count_; ++i) {
      if (ranges_[i].begin < end && begin < ranges_[i].end) return true;
    }
    return false;
  }

  // Adds [begin, end), merging with the ranges it touches. False, and the set unchanged, if the
  // result would need more than kCapacity ranges.
  bool Add(uint32_t begin, uint32_t end) {
    if (begin >= end) return true;
    Range merged{begin, end};
    Range kept[kCapacity + 1];
    int kept_count = 0;
    for (int i = 0; i < count_; ++i) {
      const Range& r = ranges_[i];
      if (r.end < merged.begin || merged.end < r.begin) {
        kept[kept_count++] = r;
      } else {
        merged.begin = std::min(merged.begin, r.begin);
        merged.end = std::max(merged.end, r.end);
      }
    }
    if (kept_count == kCapacity) return false;
    // The untouched ranges are still in order: put the merged one in its place.
    int at = kept_count;
    while (at > 0 && kept[at - 1].begin > merged.begin) {
      kept[at] = kept[at - 1];
      --at;
    }
    kept[at] = merged;
    ++kept_count;
    std::copy(kept, kept + kept_count, ranges_);
    count_ = kept_count;
    return true;
  }

  // Removes [begin, end). False, and the set unchanged, if cutting a range in two would need
  // more than kCapacity ranges.
  bool Remove(uint32_t begin, uint32_t end) {
    if (begin >= end) return true;
    Range kept[2 * kCapacity];
    int kept_count = 0;
    for (int i = 0; i < count_; ++i) {
      const Range& r = ranges_[i];
      if (r.end <= begin || end <= r.begin) {
        kept[kept_count++] = r;
        continue;
      }
      if (r.begin < begin) kept[kept_count++] = Range{r.begin, begin};
      if (end < r.end) kept[kept_count++] = Range{end, r.end};
    }
    if (kept_count > kCapacity) return false;
    std::copy(kept, kept + kept_count, ranges_);
    count_ = kept_count;
    return true;
  }

  // Removes the smallest range that shares no byte with `keep` and does not touch [begin,
  // end) (adding that range would merge with it anyway). False if there is none.
  bool RemoveSmallestApartFrom(const ByteRanges& keep, uint32_t begin, uint32_t end) {
    int smallest = -1;
    for (int i = 0; i < count_; ++i) {
      const Range& r = ranges_[i];
      if (keep.Overlaps(r.begin, r.end) || (r.begin <= end && begin <= r.end)) continue;
      if (smallest < 0 || r.end - r.begin < ranges_[smallest].end - ranges_[smallest].begin) {
        smallest = i;
      }
    }
    if (smallest < 0) return false;
    std::copy(ranges_ + smallest + 1, ranges_ + count_, ranges_ + smallest);
    --count_;
    return true;
  }

  // Widens [*begin, *end) over the gaps to its nearest ranges, nearest first, until adding it
  // would fit in the set, adding at most `max_extra` bytes. True if it fits then. Reading the
  // bytes of a short gap costs less than forgetting a range the set already knows.
  bool WidenToFit(uint32_t* begin, uint32_t* end, uint32_t max_extra) const {
    uint32_t extra = 0;
    for (;;) {
      ByteRanges trial = *this;
      if (trial.Add(*begin, *end)) return true;
      // A full set that refuses a range has a range apart from it on at least one side.
      const Range* before = nullptr;
      const Range* after = nullptr;
      for (int i = 0; i < count_; ++i) {
        if (ranges_[i].end < *begin) before = &ranges_[i];
        if (ranges_[i].begin > *end && after == nullptr) after = &ranges_[i];
      }
      const uint32_t gap_before = before ? *begin - before->end : UINT32_MAX;
      const uint32_t gap_after = after ? after->begin - *end : UINT32_MAX;
      const uint32_t gap = std::min(gap_before, gap_after);
      if (gap == UINT32_MAX || extra + gap > max_extra) return false;
      extra += gap;
      if (gap_before <= gap_after) {
        *begin = before->end;
      } else {
        *end = after->begin;
      }
    }
  }

  // Calls visit(begin, end) for each maximal piece of [begin, end) that is not in the set, in
  // order.
  template <typename Visit>
  void ForEachGap(uint32_t begin, uint32_t end, Visit visit) const {
    uint32_t at = begin;
    for (int i = 0; i < count_ && at < end; ++i) {
      const Range& r = ranges_[i];
      if (r.end <= at) continue;
      if (r.begin >= end) break;
      if (r.begin > at) visit(at, r.begin);
      at = std::max(at, r.end);
    }
    if (at < end) visit(at, end);
  }

 private:
  int count_ = 0;
  Range ranges_[kCapacity];
};

}  // namespace stagio
