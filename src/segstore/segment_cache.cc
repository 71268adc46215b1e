#include "segstore/segment_cache.h"

namespace stagio {
namespace segstore {

SegmentBytes SegmentCache::Get(uint32_t segment) {
  auto it = entries_.find(segment);
  if (it == entries_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second.position);
  return it->second.bytes;
}

void SegmentCache::Put(uint32_t segment, SegmentBytes bytes) {
  Erase(segment);
  if (!bytes || bytes->size() > capacity_) return;
  while (bytes_ + bytes->size() > capacity_ && !order_.empty()) Erase(order_.back());
  order_.push_front(segment);
  bytes_ += bytes->size();
  entries_[segment] = Entry{std::move(bytes), order_.begin()};
}

void SegmentCache::Erase(uint32_t segment) {
  auto it = entries_.find(segment);
  if (it == entries_.end()) return;
  bytes_ -= it->second.bytes->size();
  order_.erase(it->second.position);
  entries_.erase(it);
}

}  // namespace segstore
}  // namespace stagio
