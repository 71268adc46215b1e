// CollectivePrefetcher: every rank's pattern learned at one aggregator, and its proposals as
// the prefetch filter (FilterProposals) then sees them.
#include "prefetch/collective_prefetcher.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "prefetch/prefetch_filter.h"

namespace stagio {
namespace {

using Blocks = std::vector<uint64_t>;
using Proposals = std::vector<std::vector<uint64_t>>;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kLargeFile = uint64_t{1} << 40;

// 1 MiB blocks; the depth starts at two blocks.
PrefetchConfig Config(uint64_t max_blocks = 16) {
  PrefetchConfig config;
  config.mode = PrefetchMode::kCollective;
  config.block_size = kMiB;
  config.history = 8;
  config.max_bytes = max_blocks * kMiB;
  return config;
}

// Call `call` of a strided pattern over `ranks` ranks: rank r reads (call * ranks + r) * 2 MiB,
// 1 MiB of it, so each rank's stride is 2 * ranks MiB and block (call * ranks + r) * 2 is its.
std::vector<Access> StridedCall(uint64_t call, uint64_t ranks = 4) {
  std::vector<Access> spans;
  for (uint64_t rank = 0; rank < ranks; ++rank) {
    spans.push_back({(call * ranks + rank) * 2 * kMiB, kMiB});
  }
  return spans;
}

// Proposes calls [0, calls) of `pattern`; returns the last proposals.
template <typename Pattern>
Proposals ProposeCalls(CollectivePrefetcher* prefetcher, uint64_t calls, Pattern pattern,
                       uint64_t file_size = kLargeFile) {
  Proposals proposals;
  for (uint64_t call = 0; call < calls; ++call) {
    proposals = prefetcher->Propose(pattern(call), file_size);
  }
  return proposals;
}

TEST(CollectivePrefetcherTest, StridedPatternOverFourRanksProposesEachRanksNextRecords) {
  CollectivePrefetcher prefetcher(Config());
  // Two calls show one stride per rank; nothing is believed until a prediction came true.
  for (uint64_t call = 0; call < 2; ++call) {
    const Proposals proposals = prefetcher.Propose(StridedCall(call), kLargeFile);
    ASSERT_EQ(proposals.size(), 4u);
    for (const auto& blocks : proposals) EXPECT_TRUE(blocks.empty()) << "call " << call;
  }
  // The third confirms it once: each rank's next record. The depth (two blocks) would allow
  // two, but a pattern seen right once is trusted one read ahead.
  const Proposals proposals = prefetcher.Propose(StridedCall(2), kLargeFile);
  ASSERT_EQ(proposals.size(), 4u);
  for (uint64_t rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(proposals[rank], (Blocks{(12 + rank) * 2})) << "rank " << rank;
    EXPECT_STREQ(prefetcher.predictor(rank), "strided");
  }
  EXPECT_STREQ(prefetcher.predictor(4), "none") << "no such rank";

  // Deeper after used prefetches: four blocks. Each confirmation trusts one read more.
  prefetcher.OnOutcome(PrefetchOutcome::kUsedInTime);
  prefetcher.OnOutcome(PrefetchOutcome::kUsedAfterWait);
  EXPECT_EQ(prefetcher.depth_bytes(), 4 * kMiB);
  EXPECT_EQ(prefetcher.Propose(StridedCall(3), kLargeFile)[1], (Blocks{34, 42}));
  EXPECT_EQ(prefetcher.Propose(StridedCall(4), kLargeFile)[1], (Blocks{42, 50, 58}));
  EXPECT_EQ(prefetcher.Propose(StridedCall(5), kLargeFile)[1], (Blocks{50, 58, 66, 74}));
  EXPECT_EQ(prefetcher.Propose(StridedCall(6), kLargeFile)[1], (Blocks{58, 66, 74, 82}))
      << "the depth bounds it from here";
}

TEST(CollectivePrefetcherTest, NothingAtOrPastTheEndOfFile) {
  CollectivePrefetcher prefetcher(Config());
  const Proposals proposals = ProposeCalls(
      &prefetcher, 3, [](uint64_t call) { return StridedCall(call); }, 30 * kMiB);
  EXPECT_EQ(proposals[0], (Blocks{24}));
  EXPECT_EQ(proposals[2], (Blocks{28}));
  EXPECT_EQ(proposals[3], Blocks{}) << "block 30 starts at the end of file";
}

// Tile-like reads with halos: rank r reads 3 MiB from (call * 8 + r) MiB, so each rank's
// tile overlaps its neighbour's by 2 MiB.
std::vector<Access> HaloCall(uint64_t call) {
  std::vector<Access> spans;
  for (uint64_t rank = 0; rank < 4; ++rank) spans.push_back({(call * 8 + rank) * kMiB, 3 * kMiB});
  return spans;
}

TEST(CollectivePrefetcherTest, OverlappingTilesProposeDuplicatesThatTheFilterCounts) {
  CollectivePrefetcher prefetcher(Config());
  const Proposals proposals = ProposeCalls(&prefetcher, 3, HaloCall);
  EXPECT_EQ(proposals, (Proposals{{24, 25}, {25, 26}, {26, 27}, {27, 28}}));

  Blocks demanded;  // the blocks of the call itself: 16 to 21
  for (uint64_t index = 16; index <= 21; ++index) demanded.push_back(index);
  const FilteredProposals filtered = FilterProposals(
      proposals, demanded, [](uint64_t) { return true; }, [](uint64_t) { return false; });
  EXPECT_EQ(filtered.blocks, (Blocks{24, 25, 26, 27, 28}));
  EXPECT_EQ(filtered.proposed, 8u);
  EXPECT_EQ(filtered.duplicates, 3u);
  EXPECT_EQ(filtered.redundant(), 3u);
  const std::vector<BlockRun> runs = ContiguousRuns(filtered.blocks, 16);
  ASSERT_EQ(runs.size(), 1u) << "one large read for all four ranks";
  EXPECT_EQ(runs[0].first, 24u);
  EXPECT_EQ(runs[0].count, 5u);
}

TEST(CollectivePrefetcherTest, ARankThatReadsNothingKeepsItsHistoryAndGetsNoProposals) {
  CollectivePrefetcher prefetcher(Config());
  // Rank 1 takes part in every other call only, reading its k-th record at call 2k; rank 0
  // reads in every call.
  const auto pattern = [](uint64_t call) {
    std::vector<Access> spans = StridedCall(call, 2);
    spans[1] = call % 2 == 0 ? Access{(call / 2) * 4 * kMiB + 2 * kMiB, kMiB}
                             : Access{999 * kMiB, 0};
    return spans;
  };
  Proposals proposals = ProposeCalls(&prefetcher, 4, pattern);
  EXPECT_FALSE(proposals[0].empty()) << "rank 0 has read four records";
  EXPECT_EQ(proposals[1], Blocks{}) << "rank 1 read nothing in this call";
  // Rank 1's third record: the empty calls were no step of its pattern.
  proposals = prefetcher.Propose(pattern(4), kLargeFile);
  EXPECT_EQ(proposals[1], (Blocks{14}));
  EXPECT_STREQ(prefetcher.predictor(1), "strided");
  EXPECT_EQ(prefetcher.Propose(pattern(5), kLargeFile)[1], Blocks{});
}

TEST(CollectivePrefetcherTest, ARankCountChangeKeepsTheRanksThatRemain) {
  CollectivePrefetcher prefetcher(Config());
  ProposeCalls(&prefetcher, 3, [](uint64_t call) { return StridedCall(call); });
  // Two ranks now, continuing their patterns.
  std::vector<Access> two = StridedCall(3);
  two.resize(2);
  Proposals proposals = prefetcher.Propose(two, kLargeFile);
  ASSERT_EQ(proposals.size(), 2u);
  EXPECT_EQ(proposals[0], (Blocks{32, 40}));
  EXPECT_EQ(proposals[1], (Blocks{34, 42}));
  // Three: rank 2 starts over (its history went with it).
  std::vector<Access> three = StridedCall(4);
  three.resize(3);
  proposals = prefetcher.Propose(three, kLargeFile);
  ASSERT_EQ(proposals.size(), 3u);
  EXPECT_EQ(proposals[1], (Blocks{42, 50}));
  EXPECT_EQ(proposals[2], Blocks{});
  EXPECT_TRUE(prefetcher.Propose({}, kLargeFile).empty());
}

TEST(CollectivePrefetcherTest, ResetAndANewBlockSizeForgetThePatterns) {
  CollectivePrefetcher prefetcher(Config());
  const auto strided = [](uint64_t call) { return StridedCall(call); };
  ProposeCalls(&prefetcher, 3, strided);
  prefetcher.Reset();  // a new view
  EXPECT_EQ(prefetcher.Propose(StridedCall(3), kLargeFile)[0], Blocks{});
  EXPECT_STREQ(prefetcher.predictor(0), "none");

  // New bounds keep the learning and the depth; a new block size restarts both.
  ProposeCalls(&prefetcher, 3, strided);
  prefetcher.OnOutcome(PrefetchOutcome::kUsedInTime);
  PrefetchConfig bounded = Config(2);
  prefetcher.Configure(bounded);
  EXPECT_EQ(prefetcher.depth_bytes(), 2 * kMiB) << "clamped into the new bound";
  EXPECT_EQ(prefetcher.Propose(StridedCall(3), kLargeFile)[0], (Blocks{32, 40}));
  prefetcher.OnOutcome(PrefetchOutcome::kWasted);
  EXPECT_EQ(prefetcher.depth_bytes(), kMiB);
  PrefetchConfig reblocked = Config();
  reblocked.block_size = 2 * kMiB;
  prefetcher.Configure(reblocked);
  EXPECT_EQ(prefetcher.depth_bytes(), 4 * kMiB) << "two of the new blocks";
  EXPECT_EQ(prefetcher.Propose(StridedCall(4), kLargeFile)[0], Blocks{});
}

}  // namespace
}  // namespace stagio
