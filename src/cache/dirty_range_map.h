// DirtyRangeMap: a set of byte ranges [begin, end) inside one block, kept merged and sorted.
//
// The cache uses two per block: the bytes whose content it knows (fetched or written) and the
// bytes written but not yet on storage. Tracking ranges instead of a dirty bit is what lets a
// partial write stay partial: write-back sends exactly the bytes the application wrote, so no
// write ever needs a read-modify-write of the rest of the block, and two ranks writing
// disjoint parts of one block never overwrite each other's bytes.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace stagio {

class DirtyRangeMap {
 public:
  using Range = std::pair<uint64_t, uint64_t>;  // [first, second)

  // Adds [begin, end), merging with ranges it overlaps or touches. Empty ranges are ignored.
  void Add(uint64_t begin, uint64_t end);
  // Removes [begin, end), splitting ranges that straddle it.
  void Subtract(uint64_t begin, uint64_t end);
  void Clear() { ranges_.clear(); }

  bool empty() const { return ranges_.empty(); }
  // True if every byte of [begin, end) is in the set (an empty range is always covered).
  bool Covers(uint64_t begin, uint64_t end) const;
  // The parts of [begin, end) not in the set, in order.
  std::vector<Range> Gaps(uint64_t begin, uint64_t end) const;
  uint64_t TotalBytes() const;
  // One past the last byte in the set; 0 if empty.
  uint64_t End() const { return ranges_.empty() ? 0 : ranges_.rbegin()->second; }
  // The ranges in order, as (begin, end) pairs.
  std::vector<Range> Ranges() const { return {ranges_.begin(), ranges_.end()}; }

 private:
  std::map<uint64_t, uint64_t> ranges_;  // begin -> end; disjoint, not touching
};

}  // namespace stagio
