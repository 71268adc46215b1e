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

}  // namespace
}  // namespace stagio
