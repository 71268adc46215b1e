// BlockOwners: which rank's cache holds each block of a file in collective-cache mode.
//
// Blocks are dealt round-robin over the aggregator ranks, as in seed 004 (Fig. 5): block i
// belongs to aggregators[i % count]. Each block thus has exactly one home, so no block is ever
// cached twice and coherence between ranks needs no protocol beyond asking the owner. An empty
// owner list means per-rank caching: every block is the calling rank's own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace stagio {

class BlockOwners {
 public:
  BlockOwners() = default;
  // `aggregators`: distinct ranks of the file's communicator, in dealing order.
  explicit BlockOwners(std::vector<int> aggregators) : aggregators_(std::move(aggregators)) {}

  bool collective() const { return !aggregators_.empty(); }
  // The rank whose cache holds block `index`; requires collective().
  int OwnerOf(uint64_t index) const {
    return aggregators_[static_cast<size_t>(index % aggregators_.size())];
  }
  bool IsAggregator(int rank) const {
    return std::find(aggregators_.begin(), aggregators_.end(), rank) != aggregators_.end();
  }
  const std::vector<int>& aggregators() const { return aggregators_; }

 private:
  std::vector<int> aggregators_;
};

}  // namespace stagio
