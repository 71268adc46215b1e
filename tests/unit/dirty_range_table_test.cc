// DirtyRangeTable: the byte ranges a pre-execution helper's prefetch writes will change, each
// tagged with the write's sequence number. Recording (merge of touching ranges of one write,
// splitting of older ranges around newer ones), the newest write a read overlaps, releasing
// the writes the main thread has made, and a randomized comparison with a per-byte model.
#include "preexec/dirty_range_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <vector>

namespace stagio {

// Found by argument-dependent lookup, so that failed comparisons print the ranges.
inline std::ostream& operator<<(std::ostream& out, const DirtyRangeTable::Range& range) {
  return out << "[" << range.begin << ", " << range.end << ") #" << range.sequence;
}

namespace {

using Ranges = std::vector<DirtyRangeTable::Range>;

// ----- Record: merging ---------------------------------------------------------------------

TEST(DirtyRangeTableTest, EmptyTableHasNoRangesAndNoWriteOverlaps) {
  DirtyRangeTable table;
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.Ranges(), Ranges{});
  EXPECT_EQ(table.NewestWriteOverlapping(0, UINT64_MAX), 0u);
}

TEST(DirtyRangeTableTest, EmptyRangeIsNotRecorded) {
  DirtyRangeTable table;
  table.Record(10, 10, 1);
  table.Record(20, 5, 2);
  EXPECT_TRUE(table.empty());
}

TEST(DirtyRangeTableTest, TouchingRangesOfOneWriteMergeOnEitherSide) {
  DirtyRangeTable table;
  table.Record(10, 20, 1);
  table.Record(20, 30, 1);  // after
  table.Record(0, 10, 1);   // before
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 30, 1}}));
  // Filling a gap joins both neighbours into one.
  table.Record(40, 50, 2);
  table.Record(60, 70, 2);
  table.Record(50, 60, 2);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 30, 1}, {40, 70, 2}}));
}

TEST(DirtyRangeTableTest, OverlappingRangesOfOneWriteMerge) {
  DirtyRangeTable table;
  table.Record(0, 10, 1);
  table.Record(5, 15, 1);
  table.Record(12, 20, 1);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 20, 1}}));
}

TEST(DirtyRangeTableTest, TouchingRangesOfDifferentWritesStaySeparate) {
  DirtyRangeTable table;
  table.Record(0, 10, 1);
  table.Record(10, 20, 2);
  table.Record(20, 30, 3);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 10, 1}, {10, 20, 2}, {20, 30, 3}}));
}

TEST(DirtyRangeTableTest, DisjointRangesOfOneWriteStaySeparate) {
  DirtyRangeTable table;
  table.Record(0, 10, 1);
  table.Record(11, 20, 1);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 10, 1}, {11, 20, 1}}));
}

// ----- Record: splitting -------------------------------------------------------------------

TEST(DirtyRangeTableTest, NewerWriteInsideAnOlderRangeSplitsItInThree) {
  DirtyRangeTable table;
  table.Record(0, 100, 1);
  table.Record(40, 60, 2);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 40, 1}, {40, 60, 2}, {60, 100, 1}}));
}

TEST(DirtyRangeTableTest, NewerWriteOverTheStartOfAnOlderRangeTrimsIt) {
  DirtyRangeTable table;
  table.Record(50, 100, 1);
  table.Record(20, 70, 2);
  EXPECT_EQ(table.Ranges(), (Ranges{{20, 70, 2}, {70, 100, 1}}));
}

TEST(DirtyRangeTableTest, NewerWriteOverTheEndOfAnOlderRangeTrimsIt) {
  DirtyRangeTable table;
  table.Record(0, 50, 1);
  table.Record(30, 80, 2);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 30, 1}, {30, 80, 2}}));
}

TEST(DirtyRangeTableTest, NewerWriteCoveringOlderRangesReplacesThem) {
  DirtyRangeTable table;
  table.Record(10, 20, 1);
  table.Record(30, 40, 2);
  table.Record(10, 40, 3);
  EXPECT_EQ(table.Ranges(), (Ranges{{10, 40, 3}}));
  // Exactly the same bytes again: the newest write claims them.
  table.Record(10, 40, 4);
  EXPECT_EQ(table.Ranges(), (Ranges{{10, 40, 4}}));
}

TEST(DirtyRangeTableTest, NewerWriteSpanningSeveralRangesTrimsBothEnds) {
  DirtyRangeTable table;
  table.Record(0, 20, 1);
  table.Record(20, 40, 2);
  table.Record(40, 60, 3);
  table.Record(10, 50, 4);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 10, 1}, {10, 50, 4}, {50, 60, 3}}));
}

// ----- NewestWriteOverlapping --------------------------------------------------------------

TEST(DirtyRangeTableTest, NoOverlapWhenDisjoint) {
  DirtyRangeTable table;
  table.Record(100, 200, 5);
  EXPECT_EQ(table.NewestWriteOverlapping(0, 50), 0u);
  EXPECT_EQ(table.NewestWriteOverlapping(300, 400), 0u);
}

TEST(DirtyRangeTableTest, RangesAreHalfOpen) {
  DirtyRangeTable table;
  table.Record(100, 200, 5);
  EXPECT_EQ(table.NewestWriteOverlapping(0, 100), 0u) << "ends where the range begins";
  EXPECT_EQ(table.NewestWriteOverlapping(200, 300), 0u) << "begins where the range ends";
  EXPECT_EQ(table.NewestWriteOverlapping(99, 101), 5u);
  EXPECT_EQ(table.NewestWriteOverlapping(199, 200), 5u);
  EXPECT_EQ(table.NewestWriteOverlapping(100, 101), 5u);
  EXPECT_EQ(table.NewestWriteOverlapping(150, 150), 0u) << "an empty query overlaps nothing";
}

TEST(DirtyRangeTableTest, NewestOfSeveralOverlappedWrites) {
  DirtyRangeTable table;
  table.Record(0, 10, 3);
  table.Record(20, 30, 7);
  table.Record(40, 50, 9);
  EXPECT_EQ(table.NewestWriteOverlapping(5, 25), 7u);
  EXPECT_EQ(table.NewestWriteOverlapping(0, 100), 9u);
  EXPECT_EQ(table.NewestWriteOverlapping(5, 45), 9u);
  EXPECT_EQ(table.NewestWriteOverlapping(10, 20), 0u) << "only the gap between two ranges";
  EXPECT_EQ(table.NewestWriteOverlapping(0, 1), 3u);
}

TEST(DirtyRangeTableTest, QueryInsideOneRangeStartingBeforeIt) {
  DirtyRangeTable table;
  table.Record(0, 1000, 4);
  table.Record(2000, 3000, 6);
  EXPECT_EQ(table.NewestWriteOverlapping(500, 600), 4u) << "the range begins before the query";
}

// ----- ReleaseThrough ----------------------------------------------------------------------

TEST(DirtyRangeTableTest, ReleaseThroughForgetsThatCallAndEarlierOnly) {
  DirtyRangeTable table;
  table.Record(0, 10, 1);
  table.Record(20, 30, 2);
  table.Record(40, 50, 3);
  table.ReleaseThrough(2);
  EXPECT_EQ(table.Ranges(), (Ranges{{40, 50, 3}}));
  EXPECT_EQ(table.NewestWriteOverlapping(0, 30), 0u);
  table.ReleaseThrough(2);  // again: nothing else goes
  EXPECT_EQ(table.Ranges(), (Ranges{{40, 50, 3}}));
  table.ReleaseThrough(3);
  EXPECT_TRUE(table.empty());
}

TEST(DirtyRangeTableTest, ReleaseThroughZeroKeepsEverything) {
  DirtyRangeTable table;
  table.Record(0, 10, 1);
  table.ReleaseThrough(0);
  EXPECT_EQ(table.Ranges(), (Ranges{{0, 10, 1}}));
}

TEST(DirtyRangeTableTest, ReleaseKeepsTheNewerPieceOfASplitRange) {
  DirtyRangeTable table;
  table.Record(0, 100, 1);
  table.Record(40, 60, 2);
  table.ReleaseThrough(1);
  EXPECT_EQ(table.Ranges(), (Ranges{{40, 60, 2}}));
  EXPECT_EQ(table.NewestWriteOverlapping(0, 40), 0u);
  EXPECT_EQ(table.NewestWriteOverlapping(0, 41), 2u);
}

TEST(DirtyRangeTableTest, ReleaseDropsTheOlderPiecesAroundANewerRange) {
  DirtyRangeTable table;
  table.Record(0, 10, 1);
  table.Record(20, 30, 2);
  table.Record(5, 25, 3);
  ASSERT_EQ(table.Ranges(), (Ranges{{0, 5, 1}, {5, 25, 3}, {25, 30, 2}}));
  table.ReleaseThrough(2);
  EXPECT_EQ(table.Ranges(), (Ranges{{5, 25, 3}}));
}

// ----- randomized, against a per-byte model ------------------------------------------------

// The newest write of each byte of a small file (0: no pending write), the reference the table
// must agree with.
class ByteModel {
 public:
  explicit ByteModel(size_t size) : newest_(size, 0) {}
  void Record(uint64_t begin, uint64_t end, uint64_t sequence) {
    for (uint64_t i = begin; i < end; ++i) newest_[i] = sequence;
  }
  void ReleaseThrough(uint64_t sequence) {
    for (uint64_t& byte : newest_) {
      if (byte <= sequence) byte = 0;
    }
  }
  uint64_t NewestOverlapping(uint64_t begin, uint64_t end) const {
    uint64_t newest = 0;
    for (uint64_t i = begin; i < end; ++i) newest = std::max(newest, newest_[i]);
    return newest;
  }
  // The table's canonical form: maximal runs of bytes with the same pending write.
  Ranges Runs() const {
    Ranges runs;
    for (uint64_t i = 0; i < newest_.size(); ++i) {
      if (newest_[i] == 0) continue;
      if (!runs.empty() && runs.back().end == i && runs.back().sequence == newest_[i]) {
        ++runs.back().end;
      } else {
        runs.push_back({i, i + 1, newest_[i]});
      }
    }
    return runs;
  }

 private:
  std::vector<uint64_t> newest_;
};

TEST(DirtyRangeTableTest, RandomOperationsAgreeWithAPerByteModel) {
  constexpr uint64_t kSize = 300;
  std::mt19937_64 rng(20240605);
  auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  DirtyRangeTable table;
  ByteModel model(kSize);
  uint64_t sequence = 0;
  for (int step = 0; step < 5000; ++step) {
    const uint64_t roll = uniform(0, 99);
    if (roll < 55) {
      // A write, sometimes recorded as several extents of the same call (a view).
      ++sequence;
      const uint64_t extents = uniform(1, 3);
      for (uint64_t e = 0; e < extents; ++e) {
        const uint64_t begin = uniform(0, kSize - 1);
        const uint64_t end = std::min(kSize, begin + uniform(0, 40));
        table.Record(begin, end, sequence);
        model.Record(begin, end, sequence);
      }
    } else if (roll < 65) {
      const uint64_t through = uniform(0, sequence);
      table.ReleaseThrough(through);
      model.ReleaseThrough(through);
    } else {
      const uint64_t begin = uniform(0, kSize);
      const uint64_t end = std::min(kSize, begin + uniform(0, 60));
      ASSERT_EQ(table.NewestWriteOverlapping(begin, end), model.NewestOverlapping(begin, end))
          << "step " << step << ": query [" << begin << ", " << end << ")";
    }
    ASSERT_EQ(table.Ranges(), model.Runs()) << "step " << step;
    ASSERT_EQ(table.empty(), model.Runs().empty()) << "step " << step;
  }
}

}  // namespace
}  // namespace stagio
