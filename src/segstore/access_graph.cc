#include "segstore/access_graph.h"

#include <algorithm>
#include <map>

namespace stagio {
namespace segstore {

AccessGraph::AccessGraph(uint32_t j, uint32_t k, size_t max_extents)
    : j_(std::max<uint32_t>(j, 1)),
      k_(std::max(k, std::max<uint32_t>(j, 1))),
      max_extents_(std::max<size_t>(max_extents, 2)) {}

void AccessGraph::Record(const Extent& extent) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++recorded_;
  auto found = index_.find(extent);
  uint32_t current;
  if (found != index_.end()) {
    current = found->second;
  } else {
    if (entries_.size() >= max_extents_) ForgetOldest();
    current = static_cast<uint32_t>(entries_.size());
    entries_.push_back(Entry{extent, 0, {}, 0});
    index_.emplace(extent, current);
  }
  entries_[current].last_read = recorded_;
  if (previous_ >= 0 && static_cast<uint32_t>(previous_) != current) {
    Entry& before = entries_[static_cast<size_t>(previous_)];
    if (before.successors.size() < k_) {
      before.successors.push_back(current);
    } else {
      before.successors[before.next_slot] = current;
    }
    before.next_slot = (before.next_slot + 1) % k_;
  }
  previous_ = current;
}

uint64_t AccessGraph::recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

void AccessGraph::ForgetOldest() {
  std::vector<uint32_t> order(entries_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return entries_[a].last_read > entries_[b].last_read;
  });
  order.resize(entries_.size() / 2);
  std::vector<int64_t> renumbered(entries_.size(), -1);
  std::vector<Entry> kept;
  kept.reserve(order.size());
  for (uint32_t old_index : order) {
    renumbered[old_index] = static_cast<int64_t>(kept.size());
    kept.push_back(std::move(entries_[old_index]));
  }
  index_.clear();
  for (uint32_t i = 0; i < kept.size(); ++i) {
    Entry& entry = kept[i];
    // Oldest first, so that the ring goes on replacing the oldest.
    std::vector<uint32_t> successors;
    const size_t count = entry.successors.size();
    const size_t oldest = count == k_ ? entry.next_slot : 0;
    for (size_t n = 0; n < count; ++n) {
      const uint32_t successor = entry.successors[(oldest + n) % count];
      if (renumbered[successor] >= 0) {
        successors.push_back(static_cast<uint32_t>(renumbered[successor]));
      }
    }
    entry.successors = std::move(successors);
    entry.next_slot = static_cast<uint32_t>(entry.successors.size() % k_);
    index_.emplace(entry.extent, i);
  }
  previous_ = previous_ >= 0 ? renumbered[static_cast<size_t>(previous_)] : -1;
  entries_ = std::move(kept);
}

std::vector<AccessGraph::Node> AccessGraph::Snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Node> nodes(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& entry = entries_[i];
    nodes[i].extent = entry.extent;
    nodes[i].last_read = entry.last_read;
    std::map<uint32_t, uint32_t> counts;
    for (uint32_t successor : entry.successors) ++counts[successor];
    for (const auto& [successor, count] : counts) {
      if (count >= j_) nodes[i].related.push_back(successor);
    }
  }
  return nodes;
}

}  // namespace segstore
}  // namespace stagio
