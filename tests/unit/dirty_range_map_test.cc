#include "cache/dirty_range_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace stagio {
namespace {

using Range = DirtyRangeMap::Range;
using Ranges = std::vector<Range>;

DirtyRangeMap Make(std::initializer_list<Range> adds) {
  DirtyRangeMap map;
  for (const auto& [begin, end] : adds) map.Add(begin, end);
  return map;
}

// ----- Add ---------------------------------------------------------------------------------

TEST(DirtyRangeMapTest, StartsEmpty) {
  DirtyRangeMap map;
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.TotalBytes(), 0u);
  EXPECT_EQ(map.End(), 0u);
  EXPECT_TRUE(map.Ranges().empty());
}

TEST(DirtyRangeMapTest, AddSingleRange) {
  DirtyRangeMap map;
  map.Add(10, 20);
  EXPECT_FALSE(map.empty());
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 20}}));
  EXPECT_EQ(map.TotalBytes(), 10u);
  EXPECT_EQ(map.End(), 20u);
}

TEST(DirtyRangeMapTest, AddDisjointKeepsBothSorted) {
  DirtyRangeMap map;
  map.Add(30, 40);
  map.Add(10, 20);
  map.Add(50, 51);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 20}, {30, 40}, {50, 51}}));
  EXPECT_EQ(map.TotalBytes(), 21u);
  EXPECT_EQ(map.End(), 51u);
}

TEST(DirtyRangeMapTest, AddOverlappingOnTheRightMerges) {
  DirtyRangeMap map = Make({{10, 20}});
  map.Add(15, 25);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 25}}));
}

TEST(DirtyRangeMapTest, AddOverlappingOnTheLeftMerges) {
  DirtyRangeMap map = Make({{10, 20}});
  map.Add(5, 12);
  EXPECT_EQ(map.Ranges(), (Ranges{{5, 20}}));
}

TEST(DirtyRangeMapTest, AddTouchingOnTheRightMerges) {
  DirtyRangeMap map = Make({{10, 20}});
  map.Add(20, 30);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 30}}));
}

TEST(DirtyRangeMapTest, AddTouchingOnTheLeftMerges) {
  DirtyRangeMap map = Make({{10, 20}});
  map.Add(0, 10);
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 20}}));
}

TEST(DirtyRangeMapTest, AddFillingTheHoleBetweenTwoMergesAllThree) {
  DirtyRangeMap map = Make({{0, 10}, {20, 30}});
  map.Add(10, 20);
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 30}}));
}

TEST(DirtyRangeMapTest, AddOneByteGapStaysSeparate) {
  DirtyRangeMap map = Make({{0, 10}});
  map.Add(11, 20);
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 10}, {11, 20}}));
  EXPECT_EQ(map.TotalBytes(), 19u);
}

TEST(DirtyRangeMapTest, AddContainedIsNoChange) {
  DirtyRangeMap map = Make({{10, 100}});
  map.Add(20, 30);
  map.Add(10, 100);
  map.Add(10, 11);
  map.Add(99, 100);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 100}}));
}

TEST(DirtyRangeMapTest, AddContainingReplaces) {
  DirtyRangeMap map = Make({{20, 30}});
  map.Add(10, 40);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 40}}));
}

TEST(DirtyRangeMapTest, AddSpanningManyMergesThemAll) {
  DirtyRangeMap map;
  for (uint64_t i = 0; i < 50; ++i) map.Add(i * 10, i * 10 + 5);  // [0,5) [10,15) ... [490,495)
  ASSERT_EQ(map.Ranges().size(), 50u);
  map.Add(12, 473);  // overlaps [10,15) .. [470,475)
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 5}, {10, 475}, {480, 485}, {490, 495}}));
  map.Add(0, 1000);
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 1000}}));
  EXPECT_EQ(map.TotalBytes(), 1000u);
}

TEST(DirtyRangeMapTest, AddSpanningManyTouchingBothEnds) {
  DirtyRangeMap map = Make({{0, 5}, {10, 15}, {20, 25}, {30, 35}});
  map.Add(5, 30);  // touches [0,5) on the left and [30,35) on the right
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 35}}));
}

TEST(DirtyRangeMapTest, EmptyRangesAreIgnored) {
  DirtyRangeMap map;
  map.Add(5, 5);
  map.Add(7, 3);  // reversed
  EXPECT_TRUE(map.empty());
  map.Add(10, 20);
  map.Add(20, 20);  // empty, at the end of a range
  map.Add(30, 30);  // empty, alone
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 20}}));
  map.Subtract(15, 15);
  map.Subtract(18, 12);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 20}}));
}

TEST(DirtyRangeMapTest, ClearEmpties) {
  DirtyRangeMap map = Make({{1, 2}, {4, 8}});
  map.Clear();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.End(), 0u);
  EXPECT_EQ(map.TotalBytes(), 0u);
}

TEST(DirtyRangeMapTest, HandlesLargeOffsets) {
  const uint64_t big = uint64_t{1} << 62;
  DirtyRangeMap map = Make({{big, big + 10}, {big + 10, big + 20}});
  EXPECT_EQ(map.Ranges(), (Ranges{{big, big + 20}}));
  EXPECT_EQ(map.End(), big + 20);
  EXPECT_EQ(map.TotalBytes(), 20u);
}

// ----- Subtract ----------------------------------------------------------------------------

TEST(DirtyRangeMapTest, SubtractMiddleSplits) {
  DirtyRangeMap map = Make({{0, 100}});
  map.Subtract(40, 60);
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 40}, {60, 100}}));
  EXPECT_EQ(map.TotalBytes(), 80u);
}

TEST(DirtyRangeMapTest, SubtractPrefixAndSuffix) {
  DirtyRangeMap map = Make({{0, 100}});
  map.Subtract(0, 10);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 100}}));
  map.Subtract(90, 200);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 90}}));
  map.Subtract(0, 11);
  EXPECT_EQ(map.Ranges(), (Ranges{{11, 90}}));
}

TEST(DirtyRangeMapTest, SubtractWholeRangeRemovesIt) {
  DirtyRangeMap map = Make({{10, 20}, {30, 40}});
  map.Subtract(10, 20);
  EXPECT_EQ(map.Ranges(), (Ranges{{30, 40}}));
  map.Subtract(0, 1000);
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.End(), 0u);
}

TEST(DirtyRangeMapTest, SubtractTouchingIsNoChange) {
  DirtyRangeMap map = Make({{10, 20}});
  map.Subtract(0, 10);
  map.Subtract(20, 30);
  EXPECT_EQ(map.Ranges(), (Ranges{{10, 20}}));
}

TEST(DirtyRangeMapTest, SubtractSpanningManySplitsBothEnds) {
  DirtyRangeMap map = Make({{0, 10}, {20, 30}, {40, 50}, {60, 70}});
  map.Subtract(5, 65);
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 5}, {65, 70}}));
  EXPECT_EQ(map.TotalBytes(), 10u);
  EXPECT_EQ(map.End(), 70u);
}

TEST(DirtyRangeMapTest, SubtractFromGapIsNoChange) {
  DirtyRangeMap map = Make({{0, 10}, {20, 30}});
  map.Subtract(12, 18);
  EXPECT_EQ(map.Ranges(), (Ranges{{0, 10}, {20, 30}}));
}

// ----- Covers, Gaps, End -------------------------------------------------------------------

TEST(DirtyRangeMapTest, Covers) {
  DirtyRangeMap map = Make({{10, 20}, {30, 40}});
  EXPECT_TRUE(map.Covers(10, 20));
  EXPECT_TRUE(map.Covers(12, 18));
  EXPECT_TRUE(map.Covers(30, 31));
  EXPECT_TRUE(map.Covers(39, 40));
  EXPECT_FALSE(map.Covers(9, 20));
  EXPECT_FALSE(map.Covers(10, 21));
  EXPECT_FALSE(map.Covers(15, 35));  // spans the hole
  EXPECT_FALSE(map.Covers(0, 5));
  EXPECT_FALSE(map.Covers(40, 41));
  EXPECT_FALSE(map.Covers(50, 60));
  // An empty range is always covered, even outside the set.
  EXPECT_TRUE(map.Covers(0, 0));
  EXPECT_TRUE(map.Covers(25, 25));
  EXPECT_TRUE(DirtyRangeMap().Covers(7, 7));
  EXPECT_FALSE(DirtyRangeMap().Covers(0, 1));
}

TEST(DirtyRangeMapTest, Gaps) {
  DirtyRangeMap map = Make({{10, 20}, {30, 40}});
  EXPECT_EQ(map.Gaps(0, 50), (Ranges{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(map.Gaps(10, 40), (Ranges{{20, 30}}));
  EXPECT_EQ(map.Gaps(15, 35), (Ranges{{20, 30}}));
  EXPECT_EQ(map.Gaps(12, 18), Ranges{});
  EXPECT_EQ(map.Gaps(0, 5), (Ranges{{0, 5}}));
  EXPECT_EQ(map.Gaps(45, 60), (Ranges{{45, 60}}));
  EXPECT_EQ(map.Gaps(20, 30), (Ranges{{20, 30}}));
  EXPECT_EQ(map.Gaps(5, 5), Ranges{});
  EXPECT_EQ(DirtyRangeMap().Gaps(3, 9), (Ranges{{3, 9}}));
}

TEST(DirtyRangeMapTest, EndIsOnePastLastByte) {
  DirtyRangeMap map;
  map.Add(100, 200);
  map.Add(5, 6);
  EXPECT_EQ(map.End(), 200u);
  map.Subtract(150, 200);
  EXPECT_EQ(map.End(), 150u);
  map.Subtract(100, 150);
  EXPECT_EQ(map.End(), 6u);
}

// ----- Randomized, against a bitmap --------------------------------------------------------

void CheckAgainstBitmap(const DirtyRangeMap& map, const std::vector<bool>& bits) {
  const Ranges ranges = map.Ranges();
  // Sorted, non-empty, disjoint and not touching.
  for (size_t i = 0; i < ranges.size(); ++i) {
    ASSERT_LT(ranges[i].first, ranges[i].second) << "range " << i << " is empty";
    if (i > 0) {
      ASSERT_LT(ranges[i - 1].second, ranges[i].first)
          << "ranges " << i - 1 << " and " << i << " overlap or touch";
    }
  }
  // Same set of bytes as the bitmap.
  std::vector<bool> from_map(bits.size(), false);
  uint64_t total = 0;
  for (const auto& [begin, end] : ranges) {
    ASSERT_LE(end, bits.size());
    for (uint64_t b = begin; b < end; ++b) from_map[b] = true;
    total += end - begin;
  }
  for (size_t b = 0; b < bits.size(); ++b) {
    ASSERT_EQ(from_map[b], bits[b]) << "first difference from the bitmap at byte " << b;
  }
  ASSERT_EQ(map.TotalBytes(), total);
  uint64_t last = 0;
  for (size_t b = 0; b < bits.size(); ++b) {
    if (bits[b]) last = b + 1;
  }
  ASSERT_EQ(map.End(), last);
  ASSERT_EQ(map.empty(), total == 0);
}

Ranges BitmapGaps(const std::vector<bool>& bits, uint64_t begin, uint64_t end) {
  Ranges gaps;
  for (uint64_t b = begin; b < end; ++b) {
    if (bits[b]) continue;
    if (!gaps.empty() && gaps.back().second == b) {
      gaps.back().second = b + 1;
    } else {
      gaps.emplace_back(b, b + 1);
    }
  }
  return gaps;
}

class DirtyRangeMapRandomTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(DirtyRangeMapRandomTest, MatchesBitmapModel) {
  constexpr uint64_t kSpace = 4096;
  std::mt19937_64 rng(GetParam());
  DirtyRangeMap map;
  std::vector<bool> bits(kSpace, false);

  auto random_range = [&rng]() {
    // Mostly short ranges, sometimes long ones, sometimes empty/reversed ones.
    std::uniform_int_distribution<uint64_t> pos(0, kSpace);
    const uint64_t begin = pos(rng);
    uint64_t end;
    switch (rng() % 4) {
      case 0: end = begin + rng() % 8; break;
      case 1: end = begin + rng() % 64; break;
      case 2: end = begin + rng() % 1024; break;
      default: end = pos(rng); break;  // may be before begin: empty
    }
    if (end > kSpace) end = kSpace;
    return Range{begin, end};
  };

  for (int step = 0; step < 4000; ++step) {
    const auto [begin, end] = random_range();
    // Bias towards Add so the map does not stay near-empty.
    const bool add = rng() % 5 < 3;
    if (add) {
      map.Add(begin, end);
    } else {
      map.Subtract(begin, end);
    }
    for (uint64_t b = begin; b < end; ++b) bits[b] = add;
    SCOPED_TRACE(::testing::Message() << "step " << step << (add ? " Add(" : " Subtract(")
                                      << begin << ", " << end << ")");
    ASSERT_NO_FATAL_FAILURE(CheckAgainstBitmap(map, bits));

    for (int q = 0; q < 4; ++q) {
      const auto [qb, qe] = random_range();
      bool covered = true;
      for (uint64_t b = qb; b < qe; ++b) covered = covered && bits[b];
      ASSERT_EQ(map.Covers(qb, qe), covered) << "Covers(" << qb << ", " << qe << ")";
      ASSERT_EQ(map.Gaps(qb, qe), BitmapGaps(bits, qb, qe)) << "Gaps(" << qb << ", " << qe << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, DirtyRangeMapRandomTest, ::testing::Values(1u, 2u, 3u, 42u, 20240u));

}  // namespace
}  // namespace stagio
