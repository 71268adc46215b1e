// ChooseAggregators: which ranks own cache blocks, from stagio_aggregators and the node of each
// rank (aggregators.h). Node ids are the lowest rank of each node, as NodeOfEachRank makes them.
#include "collective/aggregators.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stagio {
namespace {

using Ranks = std::vector<int>;

// Two nodes of two ranks, placed block-wise (0,1 | 2,3) and round-robin (0,2 | 1,3).
const std::vector<int> kBlockPlacement{0, 0, 2, 2};
const std::vector<int> kCyclicPlacement{0, 1, 0, 1};

// The aggregators for `spec`, failing the test on any warning.
Ranks Choose(const std::string& spec, const std::vector<int>& node_of_rank) {
  std::vector<std::string> warnings;
  const Ranks chosen = ChooseAggregators(spec, node_of_rank, &warnings);
  EXPECT_TRUE(warnings.empty()) << spec << ": " << warnings.front();
  return chosen;
}

// The aggregators for a bad `spec`, requiring exactly one warning that contains `mentions`.
Ranks ChooseWarned(const std::string& spec, const std::vector<int>& node_of_rank,
                   const std::string& mentions) {
  std::vector<std::string> warnings;
  const Ranks chosen = ChooseAggregators(spec, node_of_rank, &warnings);
  EXPECT_EQ(warnings.size(), 1u) << spec;
  for (const std::string& warning : warnings) {
    EXPECT_NE(warning.find("stagio_aggregators"), std::string::npos) << warning;
    EXPECT_NE(warning.find(mentions), std::string::npos) << warning;
  }
  return chosen;
}

TEST(ChooseAggregatorsTest, AutoTakesTheLowestRankOfEachNode) {
  EXPECT_EQ(Choose("auto", {0, 0, 0, 0}), (Ranks{0}));
  EXPECT_EQ(Choose("auto", kBlockPlacement), (Ranks{0, 2}));
  EXPECT_EQ(Choose("auto", kCyclicPlacement), (Ranks{0, 1}));
  EXPECT_EQ(Choose("auto", {0, 1, 2}), (Ranks{0, 1, 2})) << "one rank per node";
  EXPECT_EQ(Choose("auto", {0}), (Ranks{0}));
}

TEST(ChooseAggregatorsTest, ACountSpreadsNodeMajor) {
  // Every node's first rank, then every node's second, ...
  EXPECT_EQ(Choose("1", kBlockPlacement), (Ranks{0}));
  EXPECT_EQ(Choose("2", kBlockPlacement), (Ranks{0, 2}));
  EXPECT_EQ(Choose("3", kBlockPlacement), (Ranks{0, 2, 1}));
  EXPECT_EQ(Choose("4", kBlockPlacement), (Ranks{0, 2, 1, 3}));
  EXPECT_EQ(Choose("3", kCyclicPlacement), (Ranks{0, 1, 2}));
  // Uneven nodes: 3 ranks on node 0, 1 on node 3, 1 on node 4.
  EXPECT_EQ(Choose("5", {0, 0, 0, 3, 4}), (Ranks{0, 3, 4, 1, 2}));
  EXPECT_EQ(Choose("2", {0, 0, 0, 0, 0}), (Ranks{0, 1})) << "one node: the first ranks";
}

TEST(ChooseAggregatorsTest, AListNamesTheRanksInItsOrder) {
  EXPECT_EQ(Choose("0,2,3", kBlockPlacement), (Ranks{0, 2, 3}));
  EXPECT_EQ(Choose("3,", kBlockPlacement), (Ranks{3})) << "a trailing comma makes a list";
  EXPECT_EQ(Choose("3,1", kBlockPlacement), (Ranks{3, 1})) << "the dealing order is the list's";
  EXPECT_EQ(Choose(" 1 , 2 ", kCyclicPlacement), (Ranks{1, 2}));
}

TEST(ChooseAggregatorsTest, ACountAboveTheRanksWarnsAndTakesThemAll) {
  EXPECT_EQ(ChooseWarned("5", kBlockPlacement, "using all"), (Ranks{0, 2, 1, 3}));
  EXPECT_EQ(ChooseWarned("1000", {0}, "using all"), (Ranks{0}));
}

TEST(ChooseAggregatorsTest, AListedRankOutsideTheFileWarnsAndFallsBackToOnePerNode) {
  EXPECT_EQ(ChooseWarned("1,4", kBlockPlacement, "rank 4"), (Ranks{0, 2}));
  EXPECT_EQ(ChooseWarned("4,", kCyclicPlacement, "rank 4"), (Ranks{0, 1}));
}

TEST(ChooseAggregatorsTest, AMalformedSpecWarnsAndFallsBackToOnePerNode) {
  for (const std::string spec : {"lots", "0", "-1", "1,1", "1,,2", ""}) {
    EXPECT_EQ(ChooseWarned(spec, kBlockPlacement, "one per node"), (Ranks{0, 2})) << spec;
  }
}

}  // namespace
}  // namespace stagio
