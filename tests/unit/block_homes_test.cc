// BlockHomes: each block has one home daemon, aggregators map to daemons in groups (seed 004,
// Fig. 5), and pieces cover a range exactly, never mixing homes or exceeding the piece limit.
#include "storage/block_homes.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

namespace stagio {
namespace {

TEST(BlockHomesTest, AggregatorsAreGroupedOntoDaemonsAsInSeed004Figure5) {
  // Four aggregators, two I/O nodes: aggregators 0 and 1 on daemon 0, 2 and 3 on daemon 1.
  BlockHomes homes{1024, 4, 2};
  const std::vector<size_t> expected = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1};
  for (uint64_t block = 0; block < expected.size(); ++block) {
    EXPECT_EQ(homes.HomeOf(block), expected[block]) << "block " << block;
  }
}

TEST(BlockHomesTest, AllBlocksOfOneAggregatorShareAHome) {
  for (uint64_t aggregators : {1, 2, 3, 5, 8}) {
    for (size_t daemons : {1, 2, 3}) {
      BlockHomes homes{4096, aggregators, daemons};
      for (uint64_t block = 0; block < 200; ++block) {
        EXPECT_EQ(homes.HomeOf(block), homes.HomeOf(block + aggregators));
        EXPECT_LT(homes.HomeOf(block), daemons);
      }
    }
  }
}

TEST(BlockHomesTest, ZeroAggregatorsActAsOne) {
  BlockHomes homes{512, 0, 3};
  EXPECT_EQ(homes.HomeOf(0), 0u);
  EXPECT_EQ(homes.HomeOf(77), 0u);
}

TEST(BlockHomesTest, PiecesCoverTheRangeInOrderWithOneHomeEachAndBoundedSize) {
  std::mt19937_64 random(42);
  for (int trial = 0; trial < 2000; ++trial) {
    const uint64_t block_size = 1 + random() % 5000;
    BlockHomes homes{block_size, 1 + random() % 6, 1 + random() % 3};
    const uint64_t offset = random() % 100000;
    const uint64_t length = random() % 60000;
    const uint64_t max_piece = 1 + random() % 20000;
    uint64_t next = offset;
    homes.ForEachPiece(offset, length, max_piece, [&](size_t home, uint64_t at, uint64_t size) {
      ASSERT_EQ(at, next);
      ASSERT_GT(size, 0u);
      ASSERT_LE(size, max_piece);
      for (uint64_t byte = at; byte < at + size; byte += 1 + size / 7) {
        ASSERT_EQ(homes.HomeOf(byte / block_size), home);
      }
      ASSERT_EQ(homes.HomeOf((at + size - 1) / block_size), home);
      next = at + size;
    });
    EXPECT_EQ(next, offset + length);
  }
}

TEST(BlockHomesTest, OneDaemonTakesARangeInPiecesOfTheLimit) {
  BlockHomes homes{1 << 20, 4, 1};
  std::vector<uint64_t> sizes;
  homes.ForEachPiece(100, 40 << 20, 16 << 20,
                     [&](size_t home, uint64_t, uint64_t size) { sizes.push_back(size); });
  EXPECT_EQ(sizes, (std::vector<uint64_t>{16 << 20, 16 << 20, 8 << 20}));
}

}  // namespace
}  // namespace stagio
