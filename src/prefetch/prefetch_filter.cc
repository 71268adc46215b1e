#include "prefetch/prefetch_filter.h"

#include <algorithm>
#include <unordered_set>

namespace stagio {

std::vector<BlockRun> ContiguousRuns(const std::vector<uint64_t>& sorted_unique,
                                     uint64_t max_blocks) {
  max_blocks = std::max<uint64_t>(max_blocks, 1);
  std::vector<BlockRun> runs;
  for (uint64_t index : sorted_unique) {
    if (!runs.empty() && runs.back().first + runs.back().count == index &&
        runs.back().count < max_blocks) {
      ++runs.back().count;
    } else {
      runs.push_back({index, 1});
    }
  }
  return runs;
}

FilteredProposals FilterProposals(const std::vector<std::vector<uint64_t>>& proposals,
                                  const std::vector<uint64_t>& demand_sorted_unique,
                                  FunctionRef<bool(uint64_t)> mine,
                                  FunctionRef<bool(uint64_t)> cached_or_in_flight) {
  FilteredProposals result;
  std::unordered_set<uint64_t> seen;
  for (const std::vector<uint64_t>& rank_proposals : proposals) {
    for (uint64_t index : rank_proposals) {
      ++result.proposed;
      if (!mine(index)) {
        ++result.not_mine;
      } else if (!seen.insert(index).second) {
        ++result.duplicates;
      } else if (std::binary_search(demand_sorted_unique.begin(), demand_sorted_unique.end(),
                                    index)) {
        ++result.demanded;
      } else if (cached_or_in_flight(index)) {
        ++result.cached;
      } else {
        result.blocks.push_back(index);
      }
    }
  }
  std::sort(result.blocks.begin(), result.blocks.end());
  return result;
}

}  // namespace stagio
