// The prefetch filter of collective prefetching (seed 000, step 5, the "PFQ" filter), and the
// cutting of the blocks that pass it into runs to read.
//
// An aggregator predicts the next reads of every rank, and ranks' predictions overlap: ranks
// reading halo tiles share blocks, and a rank may even propose a block twice. Fetching a block
// once, and only at the aggregator that owns it, is the point of doing prefetching
// collectively. The blocks that pass are then read in large contiguous runs, because storage
// serves one large request far better than many block-sized ones.
#pragma once

#include <cstdint>
#include <vector>

#include "common/function_ref.h"

namespace stagio {

struct BlockRun {
  uint64_t first = 0;
  uint64_t count = 0;

  bool operator==(const BlockRun& other) const {
    return first == other.first && count == other.count;
  }
};

// Sorted distinct block indices -> maximal runs of consecutive indices, each at most
// `max_blocks` long (0 counts as 1), in order.
std::vector<BlockRun> ContiguousRuns(const std::vector<uint64_t>& sorted_unique,
                                     uint64_t max_blocks);

// What became of the proposals: every proposal lands in exactly one count, so
// proposed == blocks.size() + not_mine + duplicates + demanded + cached.
struct FilteredProposals {
  std::vector<uint64_t> blocks;  // sorted, distinct: the blocks worth fetching
  uint64_t proposed = 0;         // proposals in, counting duplicates
  uint64_t duplicates = 0;       // proposed by an earlier rank too (or twice by one)
  uint64_t demanded = 0;         // read by the current call anyway
  uint64_t cached = 0;           // cached or in flight already
  uint64_t not_mine = 0;         // owned by another aggregator
  // Redundant: another rank's proposal or the call itself covers the block (stats'
  // prefetch_redundant); proposals of cached blocks are just planning overlap and counted apart.
  uint64_t redundant() const { return duplicates + demanded; }
};

// Prefetch proposals of several ranks -> each block once, not demanded by the current call,
// owned by this aggregator (`mine`), not cached or in flight (`cached_or_in_flight`, asked only
// for blocks that passed the other tests, once per block).
//
// Ownership is tested first, for every proposal: each aggregator filters the same proposals,
// so counting duplicates, demanded and cached blocks only where the block is owned counts each
// redundant proposal once over all aggregators, and prefetch_redundant adds up across ranks.
FilteredProposals FilterProposals(const std::vector<std::vector<uint64_t>>& proposals,
                                  const std::vector<uint64_t>& demand_sorted_unique,
                                  FunctionRef<bool(uint64_t)> mine,
                                  FunctionRef<bool(uint64_t)> cached_or_in_flight);

}  // namespace stagio
