// BlockOwners: which aggregator's cache holds each block in collective-cache mode.
#include "cache/block_owners.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace stagio {
namespace {

TEST(BlockOwnersTest, BlocksAreDealtRoundRobinInTheAggregatorsOrder) {
  const BlockOwners owners({4, 0, 2});
  ASSERT_TRUE(owners.collective());
  const std::vector<int> expected{4, 0, 2, 4, 0, 2, 4};
  for (uint64_t index = 0; index < expected.size(); ++index) {
    EXPECT_EQ(owners.OwnerOf(index), expected[index]) << "block " << index;
  }
  EXPECT_EQ(owners.OwnerOf(3000000001ull), 0) << "3000000001 % 3 == 1";
  EXPECT_EQ(owners.aggregators(), (std::vector<int>{4, 0, 2}));
}

TEST(BlockOwnersTest, IsAggregatorKnowsTheDealtRanksOnly) {
  const BlockOwners owners({1, 3});
  EXPECT_TRUE(owners.IsAggregator(1));
  EXPECT_TRUE(owners.IsAggregator(3));
  EXPECT_FALSE(owners.IsAggregator(0));
  EXPECT_FALSE(owners.IsAggregator(2));
  EXPECT_FALSE(owners.IsAggregator(-1));
}

TEST(BlockOwnersTest, OneAggregatorOwnsEveryBlock) {
  const BlockOwners owners({5});
  EXPECT_TRUE(owners.collective());
  for (uint64_t index : {0ull, 1ull, 2ull, 1000ull, ~0ull}) EXPECT_EQ(owners.OwnerOf(index), 5);
  EXPECT_TRUE(owners.IsAggregator(5));
  EXPECT_FALSE(owners.IsAggregator(0));
}

TEST(BlockOwnersTest, NoAggregatorsMeansPerRankCaching) {
  const BlockOwners owners;
  EXPECT_FALSE(owners.collective());
  EXPECT_FALSE(owners.IsAggregator(0));
  EXPECT_TRUE(owners.aggregators().empty());
  EXPECT_FALSE(BlockOwners(std::vector<int>{}).collective());
}

TEST(BlockOwnersTest, WithoutNodesABlockIsLocalToItsOwnerOnly) {
  const BlockOwners owners({0, 1, 2});
  EXPECT_FALSE(owners.shares_nodes());
  EXPECT_TRUE(owners.LocalTo(4, 1));
  EXPECT_FALSE(owners.LocalTo(4, 0));
  EXPECT_FALSE(owners.LocalTo(4, 2));
}

TEST(BlockOwnersTest, OnTheNodeCacheABlockIsLocalToEveryRankOfItsHomeNode) {
  // Ranks 0, 1 on node 0 and ranks 2, 3, 4 on node 2, dealt interleaved by node, as
  // ChooseAggregators spreads all ranks: node 0's first, node 2's first, node 0's second, ...
  const BlockOwners owners({0, 2, 1, 3, 4}, {0, 0, 2, 2, 2});
  EXPECT_TRUE(owners.shares_nodes());
  for (uint64_t index = 0; index < 20; ++index) {
    const int owner = owners.OwnerOf(index);
    const bool home_is_node_0 = owner <= 1;
    for (int rank = 0; rank < 5; ++rank) {
      const bool on_node_0 = rank <= 1;
      EXPECT_EQ(owners.LocalTo(index, rank), on_node_0 == home_is_node_0)
          << "block " << index << " (owner " << owner << "), rank " << rank;
    }
  }
  // A node's share of the blocks is its share of the ranks.
  int node_0_blocks = 0;
  for (uint64_t index = 0; index < 500; ++index) node_0_blocks += owners.OwnerOf(index) <= 1;
  EXPECT_EQ(node_0_blocks, 200);
}

}  // namespace
}  // namespace stagio
