// The daemon's prefetch policy (seed 004 V-D): after a read, the next client blocks of the same
// aggregator, cut into daemon blocks, clipped at the end of the file, without cached blocks.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "iond/prefetch_plan.h"

namespace stagio {
namespace iond {
namespace {

std::vector<BlockRun> Plan(uint64_t offset, uint64_t length, ClientLayout layout, uint64_t depth,
                           uint64_t file_size, uint64_t daemon_block,
                           const std::set<uint64_t>& cached = {}) {
  return PlanPrefetch(offset, length, layout, depth, file_size, daemon_block,
                      [&](uint64_t index) { return cached.count(index) > 0; });
}

TEST(IondPrefetchPlanTest, NextBlocksOfTheSameAggregator) {
  // Four aggregators, blocks of 100 bytes, daemon blocks the same: a read of block 5 (aggregator
  // 1) prefetches blocks 9, 13, 17.
  EXPECT_EQ(Plan(500, 100, {100, 4}, 3, 10000, 100),
            (std::vector<BlockRun>{{9, 1}, {13, 1}, {17, 1}}));
  // The last block touched decides: a read that ends in block 6 goes on from 6.
  EXPECT_EQ(Plan(550, 100, {100, 4}, 2, 10000, 100), (std::vector<BlockRun>{{10, 1}, {14, 1}}));
}

TEST(IondPrefetchPlanTest, OneAggregatorIsSequentialAndMergesIntoOneRun) {
  EXPECT_EQ(Plan(0, 100, {100, 1}, 4, 10000, 100), (std::vector<BlockRun>{{1, 4}}));
  // No layout given (0, 0): the daemon's block size, one aggregator.
  EXPECT_EQ(Plan(0, 100, {0, 0}, 2, 10000, 100), (std::vector<BlockRun>{{1, 2}}));
}

TEST(IondPrefetchPlanTest, ClientBlocksAreCutIntoDaemonBlocks) {
  // Client blocks of 400 bytes over 2 aggregators, daemon blocks of 100: client block 2 is
  // daemon blocks 8..11.
  EXPECT_EQ(Plan(0, 400, {400, 2}, 1, 10000, 100), (std::vector<BlockRun>{{8, 4}}));
  // Client blocks smaller than daemon blocks: client blocks 2 and 4 (A = 2, B = 50) are in
  // daemon blocks 1 and 2.
  EXPECT_EQ(Plan(0, 50, {50, 2}, 2, 10000, 100), (std::vector<BlockRun>{{1, 2}}));
}

TEST(IondPrefetchPlanTest, StopsAtTheEndOfTheFile) {
  // File of 1250 bytes: block 9 (900..1000) and 13 (past the end) -> only 9.
  EXPECT_EQ(Plan(500, 100, {100, 4}, 3, 1250, 100), (std::vector<BlockRun>{{9, 1}}));
  // A client block cut by the end of the file: only its daemon blocks before the end.
  EXPECT_EQ(Plan(0, 400, {400, 1}, 1, 650, 100), (std::vector<BlockRun>{{4, 3}}));
  EXPECT_TRUE(Plan(0, 100, {100, 1}, 4, 100, 100).empty());
}

TEST(IondPrefetchPlanTest, CachedBlocksAreSkippedAndSplitRuns) {
  EXPECT_EQ(Plan(0, 100, {100, 1}, 5, 10000, 100, {2, 3}),
            (std::vector<BlockRun>{{1, 1}, {4, 2}}));
}

TEST(IondPrefetchPlanTest, HostileLayoutsCannotOverflowOrRunAway) {
  // Offsets that would overflow: nothing planned.
  EXPECT_TRUE(Plan(0, 100, {UINT64_MAX / 2, 3}, 4, UINT64_MAX, 100).empty());
  // A huge client block on a huge file: bounded.
  uint64_t planned = 0;
  for (const BlockRun& run : Plan(0, 1, {uint64_t{1} << 40, 1}, 1024, UINT64_MAX, 512)) {
    planned += run.count;
  }
  EXPECT_GT(planned, 0u);
  EXPECT_LE(planned, 1024u);
  EXPECT_TRUE(Plan(0, 100, {100, 1}, 0, 10000, 100).empty());
}

}  // namespace
}  // namespace iond
}  // namespace stagio
