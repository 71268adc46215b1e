// The collective prefetch filter (FilterProposals) and the cutting of block lists into runs
// (ContiguousRuns).
#include "prefetch/prefetch_filter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <vector>

namespace stagio {

// For readable failure messages (found by argument-dependent lookup).
[[maybe_unused]] static void PrintTo(const BlockRun& run, std::ostream* out) {
  *out << "{" << run.first << " + " << run.count << "}";
}

namespace {

using Blocks = std::vector<uint64_t>;
using Runs = std::vector<BlockRun>;
using Proposals = std::vector<std::vector<uint64_t>>;

// ----- ContiguousRuns ----------------------------------------------------------------------

TEST(ContiguousRunsTest, AdjacentBlocksMergeIntoMaximalRuns) {
  EXPECT_EQ(ContiguousRuns({}, 8), Runs{});
  EXPECT_EQ(ContiguousRuns({7}, 8), (Runs{{7, 1}}));
  EXPECT_EQ(ContiguousRuns({1, 2, 3, 5, 6, 9}, UINT64_MAX), (Runs{{1, 3}, {5, 2}, {9, 1}}));
  EXPECT_EQ(ContiguousRuns({0, 1, 2, 3}, 4), (Runs{{0, 4}}));
}

TEST(ContiguousRunsTest, RunsLongerThanTheMaximumAreSplit) {
  EXPECT_EQ(ContiguousRuns({1, 2, 3, 4, 5, 9, 10}, 2), (Runs{{1, 2}, {3, 2}, {5, 1}, {9, 2}}));
  EXPECT_EQ(ContiguousRuns({4, 5, 6}, 1), (Runs{{4, 1}, {5, 1}, {6, 1}}));
  EXPECT_EQ(ContiguousRuns({4, 5, 6}, 0), (Runs{{4, 1}, {5, 1}, {6, 1}})) << "0 counts as 1";
}

// ----- FilterProposals ---------------------------------------------------------------------

// A cache probe that answers from a set and logs what it was asked.
struct CacheProbe {
  std::set<uint64_t> cached;
  Blocks asked;
  bool operator()(uint64_t index) {
    asked.push_back(index);
    return cached.count(index) > 0;
  }
};

const auto kAllMine = [](uint64_t) { return true; };

// Every proposal lands in exactly one count.
void ExpectEveryProposalCounted(const FilteredProposals& filtered) {
  EXPECT_EQ(filtered.proposed, filtered.blocks.size() + filtered.not_mine +
                                   filtered.duplicates + filtered.demanded + filtered.cached);
}

TEST(FilterProposalsTest, OverlappingProposalsOfSeveralRanksKeepEachBlockOnce) {
  CacheProbe probe;
  const FilteredProposals filtered =
      FilterProposals(Proposals{{4, 5, 6}, {6, 7, 8}, {8, 9}, {}}, {}, kAllMine, probe);
  EXPECT_EQ(filtered.blocks, (Blocks{4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(filtered.proposed, 8u);
  EXPECT_EQ(filtered.duplicates, 2u);
  EXPECT_EQ(filtered.redundant(), 2u);
  EXPECT_EQ(probe.asked, (Blocks{4, 5, 6, 7, 8, 9})) << "the cache is asked once per block";
  ExpectEveryProposalCounted(filtered);
  // Adjacent blocks of different ranks make one run.
  EXPECT_EQ(ContiguousRuns(filtered.blocks, 16), (Runs{{4, 6}}));
}

TEST(FilterProposalsTest, DuplicatesWithinOneRankCountToo) {
  CacheProbe probe;
  const FilteredProposals filtered =
      FilterProposals(Proposals{{9, 3, 9, 3, 3}}, {}, kAllMine, probe);
  EXPECT_EQ(filtered.blocks, (Blocks{3, 9})) << "sorted, whatever the order proposed";
  EXPECT_EQ(filtered.proposed, 5u);
  EXPECT_EQ(filtered.duplicates, 3u);
  EXPECT_EQ(probe.asked, (Blocks{9, 3}));
  ExpectEveryProposalCounted(filtered);
}

TEST(FilterProposalsTest, BlocksTheCallReadsAnywayAreDemanded) {
  CacheProbe probe;
  const FilteredProposals filtered =
      FilterProposals(Proposals{{1, 2, 3}, {3, 4}}, {2, 3, 10}, kAllMine, probe);
  EXPECT_EQ(filtered.blocks, (Blocks{1, 4}));
  EXPECT_EQ(filtered.demanded, 2u);
  EXPECT_EQ(filtered.duplicates, 1u) << "the second 3 is a duplicate, not demanded twice";
  EXPECT_EQ(filtered.redundant(), 3u);
  EXPECT_EQ(probe.asked, (Blocks{1, 4})) << "demanded blocks need no cache lookup";
  ExpectEveryProposalCounted(filtered);
}

TEST(FilterProposalsTest, CachedOrInFlightBlocksAreNotFetchedAgain) {
  CacheProbe probe;
  probe.cached = {5, 7};
  const FilteredProposals filtered =
      FilterProposals(Proposals{{5, 6}, {7, 5, 8}}, {}, kAllMine, probe);
  EXPECT_EQ(filtered.blocks, (Blocks{6, 8}));
  EXPECT_EQ(filtered.cached, 2u);
  EXPECT_EQ(filtered.duplicates, 1u);
  EXPECT_EQ(probe.asked, (Blocks{5, 6, 7, 8}));
  ExpectEveryProposalCounted(filtered);
  EXPECT_EQ(ContiguousRuns(filtered.blocks, 16), (Runs{{6, 1}, {8, 1}}))
      << "a cached block in the middle splits the run";
}

TEST(FilterProposalsTest, OnlyTheBlocksThisAggregatorOwnsAndNothingCountedForOthers) {
  CacheProbe probe;
  const auto even = [](uint64_t index) { return index % 2 == 0; };
  const FilteredProposals filtered =
      FilterProposals(Proposals{{1, 2, 3, 4}, {3, 4, 5, 6}}, {6}, even, probe);
  EXPECT_EQ(filtered.blocks, (Blocks{2, 4}));
  EXPECT_EQ(filtered.not_mine, 4u) << "1, 3, 3, 5: each proposal of another's block";
  EXPECT_EQ(filtered.duplicates, 1u) << "4 only: the other aggregator counts its own";
  EXPECT_EQ(filtered.demanded, 1u);
  EXPECT_EQ(filtered.redundant(), 2u);
  EXPECT_EQ(probe.asked, (Blocks{2, 4}));
  ExpectEveryProposalCounted(filtered);
}

TEST(FilterProposalsTest, NoProposalsNoBlocks) {
  CacheProbe probe;
  const FilteredProposals filtered = FilterProposals(Proposals{}, {1, 2}, kAllMine, probe);
  EXPECT_TRUE(filtered.blocks.empty());
  EXPECT_EQ(filtered.proposed, 0u);
  EXPECT_EQ(filtered.redundant(), 0u);
  EXPECT_TRUE(probe.asked.empty());
}

}  // namespace
}  // namespace stagio
