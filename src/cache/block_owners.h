// BlockOwners: which rank's cache holds each block of a file in collective-cache mode.
//
// Blocks are dealt round-robin over the aggregator ranks, as in seed 004 (Fig. 5): block i
// belongs to aggregators[i % count]. Each block thus has exactly one home, so no block is ever
// cached twice and coherence between ranks needs no protocol beyond asking the owner. An empty
// owner list means per-rank caching: every block is the calling rank's own.
//
// With the node cache on several nodes, the ranks of a node share one cache, so a block's home
// is its owner's node: every rank of that node reads and writes it in the node's shared table,
// and only ranks of other nodes ask the owner (LocalTo).
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
  // `node_of_rank[r]`: the node of rank r (equal ids, one node), for ranks that share a cache
  // with their node-mates.
  BlockOwners(std::vector<int> aggregators, std::vector<int> node_of_rank)
      : aggregators_(std::move(aggregators)), node_of_rank_(std::move(node_of_rank)) {}

  bool collective() const { return !aggregators_.empty(); }
  // The rank whose cache holds block `index`; requires collective().
  int OwnerOf(uint64_t index) const {
    return aggregators_[static_cast<size_t>(index % aggregators_.size())];
  }
  // True if `rank` reads and writes block `index` in its own cache: it owns the block, or a
  // node-mate does and they share one. Requires collective().
  bool LocalTo(uint64_t index, int rank) const { return ShareACache(OwnerOf(index), rank); }
  // True if ranks `a` and `b` cache in one place: they are the same rank, or node-mates that
  // share their node's cache.
  bool ShareACache(int a, int b) const {
    if (a == b) return true;
    return !node_of_rank_.empty() &&
           node_of_rank_[static_cast<size_t>(a)] == node_of_rank_[static_cast<size_t>(b)];
  }
  bool shares_nodes() const { return !node_of_rank_.empty(); }
  bool IsAggregator(int rank) const {
    return std::find(aggregators_.begin(), aggregators_.end(), rank) != aggregators_.end();
  }
  const std::vector<int>& aggregators() const { return aggregators_; }

 private:
  std::vector<int> aggregators_;
  std::vector<int> node_of_rank_;  // empty: no rank shares its cache
};

}  // namespace stagio
