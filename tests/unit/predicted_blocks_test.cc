// PredictedBlocks and PredictionCount: from predicted accesses to the blocks to fetch ahead.
#include "prefetch/predicted_blocks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace stagio {
namespace {

using Blocks = std::vector<uint64_t>;
using Accesses = std::vector<Access>;

constexpr uint64_t kB = 4096;
constexpr uint64_t kLargeFile = uint64_t{1} << 40;

TEST(PredictedBlocksTest, NearestFirstUntilTheDepthIsCovered) {
  // Predicted in the order they will come, which is not the order of their offsets.
  const Accesses predicted{{9 * kB, 2 * kB}, {2 * kB, kB}, {20 * kB, 3 * kB}};
  EXPECT_EQ(PredictedBlocks(predicted, Access{}, kB, kLargeFile, 4 * kB), (Blocks{9, 10, 2, 20}));
  EXPECT_EQ(PredictedBlocks(predicted, Access{}, kB, kLargeFile, 100 * kB),
            (Blocks{9, 10, 2, 20, 21, 22}));
  EXPECT_EQ(PredictedBlocks(predicted, Access{}, kB, kLargeFile, 0), (Blocks{9}))
      << "at least one block";
}

TEST(PredictedBlocksTest, AccessesOffBlockBoundariesTakeEveryBlockTheyTouch) {
  EXPECT_EQ(PredictedBlocks({{kB - 1, 2}}, Access{}, kB, kLargeFile, 8 * kB), (Blocks{0, 1}));
}

TEST(PredictedBlocksTest, TheReadsOwnBlocksAndRepeatsAreSkippedAndDoNotCount) {
  const Access span{4 * kB + 100, 2 * kB};  // blocks 4 to 6
  const Accesses predicted{{5 * kB, 3 * kB}, {7 * kB, kB}, {8 * kB, kB}, {9 * kB, kB}};
  EXPECT_EQ(PredictedBlocks(predicted, span, kB, kLargeFile, 2 * kB), (Blocks{7, 8}));
}

TEST(PredictedBlocksTest, NothingAtOrPastTheEndOfFileAndEmptyAccessesAreSkipped) {
  const Accesses predicted{{3 * kB, 0}, {5 * kB, 2 * kB}, {10 * kB, kB}, {6 * kB, kB}};
  EXPECT_EQ(PredictedBlocks(predicted, Access{}, kB, 6 * kB + 1, 8 * kB), (Blocks{5, 6}));
  EXPECT_EQ(PredictedBlocks(predicted, Access{}, kB, 0, 8 * kB), Blocks{});
}

TEST(PredictionCountTest, EnoughReadsToCoverTheDepthAtMost64) {
  EXPECT_EQ(PredictionCount(8 * kB, 2 * kB), 5u);
  EXPECT_EQ(PredictionCount(8 * kB, 16 * kB), 1u);
  EXPECT_EQ(PredictionCount(8 * kB, 1), 64u);
  EXPECT_EQ(PredictionCount(8 * kB, 0), 64u) << "an empty read does not divide by zero";
}

}  // namespace
}  // namespace stagio
