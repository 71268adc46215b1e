// SegmentCache: whole segments in memory, least recently used out first (seed 002 §3.1). A
// segment read from disk comes in whole, so the rest of its group is in memory before it is
// asked for: the grouping is the prefetch. Not thread-safe; the store locks around it.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

namespace stagio {
namespace segstore {

using SegmentBytes = std::shared_ptr<const std::string>;

class SegmentCache {
 public:
  explicit SegmentCache(uint64_t capacity) : capacity_(capacity) {}

  // The segment's bytes, now the most recently used; null if not held.
  SegmentBytes Get(uint32_t segment);
  // Holds `bytes` for `segment`, evicting the least recently used as needed. A segment larger
  // than the whole cache is not held.
  void Put(uint32_t segment, SegmentBytes bytes);
  void Erase(uint32_t segment);
  uint64_t bytes() const { return bytes_; }

 private:
  struct Entry {
    SegmentBytes bytes;
    std::list<uint32_t>::iterator position;
  };
  const uint64_t capacity_;
  uint64_t bytes_ = 0;
  std::list<uint32_t> order_;  // most recently used first
  std::unordered_map<uint32_t, Entry> entries_;
};

}  // namespace segstore
}  // namespace stagio
