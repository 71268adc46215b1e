// How the segment store decides what to group: strongly connected components on known
// graphs, the best-j-out-of-k popularity window, groups from the access graph, and the packing
// of groups into segments.
#include <gtest/gtest.h>

#include <algorithm>

#include "segstore/access_graph.h"
#include "segstore/grouping.h"
#include "segstore/strong_components.h"

namespace stagio {
namespace segstore {
namespace {

const FileKey kFile{1, 10};
const FileKey kOther{1, 11};

Extent Block(uint64_t index, const FileKey& file = kFile) {
  return Extent{file, index * 100, 100};
}

std::vector<std::vector<size_t>> Sorted(std::vector<std::vector<size_t>> components) {
  std::sort(components.begin(), components.end());
  return components;
}

TEST(StrongComponentsTest, KnownGraphs) {
  // Two cycles joined by one edge, and a node alone: 0->1->2->0, 2->3, 3->4->3, 5.
  EXPECT_EQ(Sorted(StrongComponents({{1}, {2}, {0, 3}, {4}, {3}, {}})),
            (std::vector<std::vector<size_t>>{{0, 1, 2}, {3, 4}, {5}}));
  // A chain has no cycle: every node is its own component.
  EXPECT_EQ(Sorted(StrongComponents({{1}, {2}, {3}, {}})),
            (std::vector<std::vector<size_t>>{{0}, {1}, {2}, {3}}));
  // The textbook example (CLRS Fig. 22.9): a b c d e f g h = 0..7.
  EXPECT_EQ(Sorted(StrongComponents({{1}, {2, 4, 5}, {3, 6}, {2, 7}, {0, 5}, {6}, {5, 7}, {7}})),
            (std::vector<std::vector<size_t>>{{0, 1, 4}, {2, 3}, {5, 6}, {7}}));
  EXPECT_TRUE(StrongComponents({}).empty());
}

TEST(StrongComponentsTest, ALongCycleNeedsNoDeepRecursion) {
  const size_t count = 200000;
  std::vector<std::vector<size_t>> edges(count);
  for (size_t i = 0; i < count; ++i) edges[i].push_back((i + 1) % count);
  const auto components = StrongComponents(edges);
  ASSERT_EQ(components.size(), 1u);
  EXPECT_EQ(components[0].size(), count);
}

// The related successors of `extent` in a snapshot of `graph`.
std::vector<Extent> RelatedTo(const AccessGraph& graph, const Extent& extent) {
  const auto nodes = graph.Snapshot();
  std::vector<Extent> related;
  for (const auto& node : nodes) {
    if (!(node.extent == extent)) continue;
    for (size_t index : node.related) related.push_back(nodes[index].extent);
  }
  return related;
}

TEST(AccessGraphTest, ASuccessorCountsWhenSeenJTimesInTheLastK) {
  AccessGraph graph(/*j=*/2, /*k=*/3, /*max_extents=*/100);
  graph.Record(Block(0));
  graph.Record(Block(1));
  EXPECT_TRUE(RelatedTo(graph, Block(0)).empty()) << "seen once, j is 2";
  graph.Record(Block(0));
  graph.Record(Block(1));
  EXPECT_EQ(RelatedTo(graph, Block(0)), (std::vector<Extent>{Block(1)}));
  // Three other successors push both 1s out of 0's last three.
  for (uint64_t other : {2, 3, 4}) {
    graph.Record(Block(0));
    graph.Record(Block(other));
  }
  EXPECT_TRUE(RelatedTo(graph, Block(0)).empty());
  EXPECT_EQ(graph.recorded(), 10u);
}

TEST(AccessGraphTest, RepeatedReadsOfOneExtentAreNotItsOwnSuccessor) {
  AccessGraph graph(1, 4, 100);
  graph.Record(Block(0));
  graph.Record(Block(0));
  graph.Record(Block(1));
  EXPECT_EQ(RelatedTo(graph, Block(0)), (std::vector<Extent>{Block(1)}));
  EXPECT_TRUE(RelatedTo(graph, Block(1)).empty());
}

TEST(AccessGraphTest, MemoryIsBoundedByForgettingTheLeastRecentlyRead) {
  AccessGraph graph(1, 4, /*max_extents=*/8);
  for (uint64_t i = 0; i < 100; ++i) graph.Record(Block(i));
  const auto nodes = graph.Snapshot();
  EXPECT_LE(nodes.size(), 8u);
  // The newest extents are kept, with their relations.
  EXPECT_EQ(RelatedTo(graph, Block(98)), (std::vector<Extent>{Block(99)}));
  for (const auto& node : nodes) EXPECT_GE(node.extent.offset, 90u * 100);
}

TEST(FindGroupsTest, OnePassGroupsItsExtentsInAccessOrder) {
  AccessGraph graph(1, 4, 100);
  for (uint64_t index : {7, 3, 9, 1}) graph.Record(Block(index));
  const auto groups = FindGroups(graph.Snapshot(), 0);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::vector<Extent>{Block(7), Block(3), Block(9), Block(1)}));
}

TEST(FindGroupsTest, OnlyExtentsReadSinceTheLastRunCount) {
  AccessGraph graph(1, 4, 100);
  for (uint64_t index : {1, 2, 3}) graph.Record(Block(index));
  const uint64_t last_run = graph.recorded();
  EXPECT_TRUE(FindGroups(graph.Snapshot(), last_run).empty());
  graph.Record(Block(5));
  graph.Record(Block(6));
  const auto groups = FindGroups(graph.Snapshot(), last_run);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], (std::vector<Extent>{Block(5), Block(6)}));
}

TEST(FindGroupsTest, UnrelatedPatternsMakeSeparateGroups) {
  // With j = 2, only pairs seen twice are related: 1,2 twice and 5,6 twice, with a jump between
  // them seen once.
  AccessGraph graph(2, 4, 100);
  for (int round = 0; round < 2; ++round) {
    graph.Record(Block(1));
    graph.Record(Block(2));
    graph.Record(Block(1));  // back, so 2 -> 1 as well
  }
  graph.Record(Block(5));
  for (int round = 0; round < 2; ++round) {
    graph.Record(Block(6));
    graph.Record(Block(5));
  }
  const auto groups = FindGroups(graph.Snapshot(), 0);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], (std::vector<Extent>{Block(2), Block(1)}));
  EXPECT_EQ(groups[1], (std::vector<Extent>{Block(6), Block(5)}));
}

std::vector<Extent> AllUnplaced(const Extent& extent) { return {extent}; }

TEST(PackGroupsTest, GroupsFillSegmentsInOrderAndStartTheirOwn) {
  const std::vector<std::vector<Extent>> groups = {
      {Block(5), Block(1), Block(9)},   // 300 bytes: two segments of 250
      {Block(2, kOther), Block(4, kOther)}};
  const auto plans = PackGroups(groups, 250, AllUnplaced);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].pieces, (std::vector<Extent>{Block(5), Block(1)}));
  EXPECT_EQ(plans[0].bytes, 200u);
  EXPECT_EQ(plans[1].pieces, (std::vector<Extent>{Block(9)}));
  EXPECT_EQ(plans[2].pieces, (std::vector<Extent>{Block(2, kOther), Block(4, kOther)}));
}

TEST(PackGroupsTest, OnlyUnplacedPartsArePackedAndOverlapsOnce) {
  // The store holds [150, 200) already; extents [100, 200) and [100, 300) overlap.
  const auto unplaced = [](const Extent& extent) {
    std::vector<Extent> parts;
    if (extent.offset < 150) {
      parts.push_back(Extent{extent.file, extent.offset, 150 - extent.offset});
    }
    if (extent.end() > 200) parts.push_back(Extent{extent.file, 200, extent.end() - 200});
    return parts;
  };
  const auto plans = PackGroups({{Extent{kFile, 100, 100}, Extent{kFile, 100, 200}}}, 1000,
                                unplaced);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].pieces,
            (std::vector<Extent>{Extent{kFile, 100, 50}, Extent{kFile, 200, 100}}));
}

TEST(PackGroupsTest, PartsLargerThanASegmentAndLonePartsAreLeftOut) {
  // A part longer than a segment is sequential already; what is left of the group is one
  // part, which is no group.
  const auto plans = PackGroups({{Extent{kFile, 0, 5000}, Block(70)}}, 1000, AllUnplaced);
  EXPECT_TRUE(plans.empty());
}

}  // namespace
}  // namespace segstore
}  // namespace stagio
