#include "prefetch/adaptive_depth.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace stagio {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(AdaptiveDepthTest, StartsAtTheInitialDepthClampedToTheBounds) {
  EXPECT_EQ(AdaptiveDepth(kBlock, kMiB, 8 * kMiB).bytes(), kMiB);
  EXPECT_EQ(AdaptiveDepth(kBlock, 0, 8 * kMiB).bytes(), kBlock);
  EXPECT_EQ(AdaptiveDepth(kBlock, 64 * kMiB, 8 * kMiB).bytes(), 8 * kMiB);
  AdaptiveDepth depth(kBlock, kMiB, 8 * kMiB);
  EXPECT_EQ(depth.min_bytes(), kBlock);
  EXPECT_EQ(depth.max_bytes(), 8 * kMiB);
}

TEST(AdaptiveDepthTest, EachBlockUsedInTimeAddsOneStep) {
  AdaptiveDepth depth(kBlock, kMiB, 8 * kMiB);
  depth.OnUsedInTime();
  EXPECT_EQ(depth.bytes(), kMiB + kBlock);
  depth.OnUsedInTime();
  EXPECT_EQ(depth.bytes(), kMiB + 2 * kBlock);
}

TEST(AdaptiveDepthTest, ARoundOfUsedBlocksDoublesTheDepth) {
  AdaptiveDepth depth(kBlock, 16 * kBlock, 8 * kMiB);
  for (int i = 0; i < 16; ++i) depth.OnUsedInTime();
  EXPECT_EQ(depth.bytes(), 32 * kBlock);
}

TEST(AdaptiveDepthTest, GrowthStopsAtTheMaximum) {
  AdaptiveDepth depth(kBlock, kMiB, kMiB + 3 * kBlock);
  for (int i = 0; i < 10; ++i) depth.OnUsedInTime();
  EXPECT_EQ(depth.bytes(), kMiB + 3 * kBlock);
}

TEST(AdaptiveDepthTest, AWastedBlockHalvesTheDepth) {
  AdaptiveDepth depth(kBlock, kMiB, 8 * kMiB);
  depth.OnWasted();
  EXPECT_EQ(depth.bytes(), kMiB / 2);
  depth.OnWasted();
  EXPECT_EQ(depth.bytes(), kMiB / 4);
}

TEST(AdaptiveDepthTest, ALateBlockShrinksTheDepthByAQuarter) {
  AdaptiveDepth depth(kBlock, kMiB, 8 * kMiB);
  depth.OnLate();
  EXPECT_EQ(depth.bytes(), 3 * kMiB / 4);
}

TEST(AdaptiveDepthTest, ShrinkingStopsAtTheMinimum) {
  AdaptiveDepth depth(2 * kBlock, kMiB, 8 * kMiB);
  for (int i = 0; i < 20; ++i) depth.OnWasted();
  EXPECT_EQ(depth.bytes(), 2 * kBlock);
  for (int i = 0; i < 20; ++i) depth.OnLate();
  EXPECT_EQ(depth.bytes(), 2 * kBlock);
}

TEST(AdaptiveDepthTest, WithoutAMinimumItNeverShrinksToZero) {
  AdaptiveDepth depth(0, 10, 100);
  for (int i = 0; i < 20; ++i) depth.OnWasted();
  EXPECT_EQ(depth.bytes(), 1u);  // halving rounds up
  depth.OnUsedInTime();          // a step of one byte
  EXPECT_EQ(depth.bytes(), 2u);
}

TEST(AdaptiveDepthTest, SettlesWhereGrowthBalancesWaste) {
  // One block in ten wasted: the depth after each waste settles at 9 steps (18 before it),
  // as the header's 2 * step * (1 - q) / q predicts for its peak.
  AdaptiveDepth depth(kBlock, kMiB, 8 * kMiB);
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 9; ++i) depth.OnUsedInTime();
    depth.OnWasted();
  }
  EXPECT_NEAR(static_cast<double>(depth.bytes()), 9.0 * kBlock, 1.0);
}

TEST(AdaptiveDepthTest, SetBoundsClampsTheDepth) {
  AdaptiveDepth depth(kBlock, kMiB, 8 * kMiB);
  depth.SetBounds(2 * kMiB, 4 * kMiB);
  EXPECT_EQ(depth.bytes(), 2 * kMiB);
  depth.SetBounds(kBlock, kMiB / 2);
  EXPECT_EQ(depth.bytes(), kMiB / 2);
  depth.SetBounds(kBlock, 8 * kMiB);  // widening leaves the depth where it is
  EXPECT_EQ(depth.bytes(), kMiB / 2);
  depth.SetBounds(kMiB, kBlock);  // a maximum below the minimum is raised to it
  EXPECT_EQ(depth.min_bytes(), kMiB);
  EXPECT_EQ(depth.max_bytes(), kMiB);
  EXPECT_EQ(depth.bytes(), kMiB);
}

}  // namespace
}  // namespace stagio
