#include "prefetch/access_history.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace stagio {
namespace {

std::vector<uint64_t> Offsets(const AccessHistory& history) {
  std::vector<uint64_t> offsets;
  for (size_t i = 0; i < history.size(); ++i) offsets.push_back(history[i].offset);
  return offsets;
}

void RecordOffsets(AccessHistory* history, uint64_t first, uint64_t last) {
  for (uint64_t offset = first; offset <= last; ++offset) history->Record({offset, 1});
}

TEST(AccessTest, EqualityComparesOffsetAndLength) {
  EXPECT_EQ((Access{10, 5}), (Access{10, 5}));
  EXPECT_NE((Access{10, 5}), (Access{10, 6}));
  EXPECT_NE((Access{10, 5}), (Access{11, 5}));
  EXPECT_EQ((Access{10, 5}).end(), 15u);
}

TEST(AccessHistoryTest, StartsEmptyWithTheDefaultWindowOfEight) {
  AccessHistory history;
  EXPECT_TRUE(history.empty());
  EXPECT_EQ(history.size(), 0u);
  EXPECT_EQ(history.window(), 8u);
  EXPECT_EQ(AccessHistory::kDefaultWindow, 8u);
}

TEST(AccessHistoryTest, KeepsAccessesOldestFirst) {
  AccessHistory history;
  history.Record({100, 10});
  history.Record({300, 30});
  history.Record({200, 20});
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0], (Access{100, 10}));
  EXPECT_EQ(history[1], (Access{300, 30}));
  EXPECT_EQ(history[2], (Access{200, 20}));
  EXPECT_EQ(history.back(), (Access{200, 20}));
}

TEST(AccessHistoryTest, DropsTheOldestWhenFull) {
  AccessHistory history(4);
  RecordOffsets(&history, 1, 6);
  EXPECT_EQ(history.size(), 4u);
  EXPECT_EQ(Offsets(history), (std::vector<uint64_t>{3, 4, 5, 6}));
  EXPECT_EQ(history.back().offset, 6u);
}

TEST(AccessHistoryTest, WindowBelowTwoIsClampedToTwo) {
  for (size_t window : {0, 1}) {
    AccessHistory history(window);
    EXPECT_EQ(history.window(), 2u);
    RecordOffsets(&history, 1, 5);
    EXPECT_EQ(Offsets(history), (std::vector<uint64_t>{4, 5}));
  }
  AccessHistory history;
  history.SetWindow(1);
  EXPECT_EQ(history.window(), 2u);
}

TEST(AccessHistoryTest, ShrinkingTheWindowDropsTheOldest) {
  AccessHistory history;
  RecordOffsets(&history, 1, 8);
  history.SetWindow(3);
  EXPECT_EQ(history.window(), 3u);
  EXPECT_EQ(Offsets(history), (std::vector<uint64_t>{6, 7, 8}));
}

TEST(AccessHistoryTest, GrowingTheWindowKeepsEverythingAndMakesRoom) {
  AccessHistory history(3);
  RecordOffsets(&history, 1, 5);
  history.SetWindow(5);
  EXPECT_EQ(Offsets(history), (std::vector<uint64_t>{3, 4, 5}));
  RecordOffsets(&history, 6, 8);
  EXPECT_EQ(Offsets(history), (std::vector<uint64_t>{4, 5, 6, 7, 8}));
}

TEST(AccessHistoryTest, ClearEmptiesButKeepsTheWindow) {
  AccessHistory history(5);
  RecordOffsets(&history, 1, 4);
  history.Clear();
  EXPECT_TRUE(history.empty());
  EXPECT_EQ(history.window(), 5u);
  RecordOffsets(&history, 10, 11);
  EXPECT_EQ(Offsets(history), (std::vector<uint64_t>{10, 11}));
}

}  // namespace
}  // namespace stagio
