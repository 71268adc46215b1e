#include "cache/block_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "support/block_piece_compare.h"

namespace stagio {
namespace {

// Compared and printed by support/block_piece_compare.h.
using Piece = BlockPiece;

std::vector<Piece> Pieces(const BlockMap& map, uint64_t offset, uint64_t length) {
  std::vector<Piece> pieces;
  const bool finished = map.ForEachPiece(offset, length, [&](const BlockPiece& piece) {
    pieces.push_back(piece);
    return true;
  });
  EXPECT_TRUE(finished);
  return pieces;
}

// The invariants every decomposition must satisfy.
void CheckDecomposition(uint64_t block_size, uint64_t offset, uint64_t length) {
  SCOPED_TRACE(::testing::Message() << "block_size " << block_size << " offset " << offset
                                    << " length " << length);
  const BlockMap map(block_size);
  const std::vector<Piece> pieces = Pieces(map, offset, length);
  if (length == 0) {
    EXPECT_TRUE(pieces.empty());
    return;
  }
  ASSERT_FALSE(pieces.empty());
  uint64_t cursor = offset;
  uint64_t total = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    SCOPED_TRACE(::testing::Message() << "piece " << i << " " << p);
    ASSERT_GT(p.length, 0u);
    ASSERT_LT(p.offset_in_block, block_size);
    ASSERT_LE(p.offset_in_block + p.length, block_size) << "piece crosses its block's end";
    ASSERT_EQ(map.BlockStart(p.index) + p.offset_in_block, cursor) << "pieces not contiguous";
    if (i > 0) {
      ASSERT_EQ(p.offset_in_block, 0u);
      ASSERT_EQ(p.index, pieces[i - 1].index + 1);
    }
    if (i + 1 < pieces.size()) {
      ASSERT_EQ(p.offset_in_block + p.length, block_size) << "inner piece stops short of block end";
    }
    cursor += p.length;
    total += p.length;
  }
  EXPECT_EQ(total, length);
  // As few pieces as possible: one per block touched.
  const uint64_t first_block = offset / block_size;
  const uint64_t last_block = (offset + length - 1) / block_size;
  EXPECT_EQ(pieces.size(), last_block - first_block + 1);
}

TEST(BlockMapTest, Accessors) {
  BlockMap map(4096);
  EXPECT_EQ(map.block_size(), 4096u);
  EXPECT_EQ(map.BlockStart(0), 0u);
  EXPECT_EQ(map.BlockStart(3), 3u * 4096);
}

TEST(BlockMapTest, ZeroLengthVisitsNothing) {
  for (uint64_t block_size : {uint64_t{1}, uint64_t{512}, uint64_t{37 * 1024}}) {
    BlockMap map(block_size);
    int calls = 0;
    EXPECT_TRUE(map.ForEachPiece(12345, 0, [&](const BlockPiece&) {
      ++calls;
      return true;
    }));
    EXPECT_EQ(calls, 0);
  }
}

TEST(BlockMapTest, AlignedWholeBlock) {
  BlockMap map(512);
  EXPECT_EQ(Pieces(map, 1024, 512), (std::vector<Piece>{{2, 0, 512}}));
}

TEST(BlockMapTest, InsideOneBlock) {
  BlockMap map(512);
  EXPECT_EQ(Pieces(map, 600, 100), (std::vector<Piece>{{1, 88, 100}}));
  EXPECT_EQ(Pieces(map, 1023, 1), (std::vector<Piece>{{1, 511, 1}}));
}

TEST(BlockMapTest, UnalignedSpanningBlocks) {
  BlockMap map(512);
  EXPECT_EQ(Pieces(map, 500, 1100),
            (std::vector<Piece>{{0, 500, 12}, {1, 0, 512}, {2, 0, 512}, {3, 0, 64}}));
}

TEST(BlockMapTest, EndingExactlyAtBlockEnd) {
  BlockMap map(512);
  EXPECT_EQ(Pieces(map, 256, 768), (std::vector<Piece>{{0, 256, 256}, {1, 0, 512}}));
}

TEST(BlockMapTest, BlockSizeOne) {
  BlockMap map(1);
  EXPECT_EQ(Pieces(map, 7, 3), (std::vector<Piece>{{7, 0, 1}, {8, 0, 1}, {9, 0, 1}}));
  CheckDecomposition(1, 0, 1000);
}

TEST(BlockMapTest, OneMebibyteBlocks) {
  const uint64_t mib = uint64_t{1} << 20;
  BlockMap map(mib);
  EXPECT_EQ(Pieces(map, mib - 1, 2), (std::vector<Piece>{{0, mib - 1, 1}, {1, 0, 1}}));
  EXPECT_EQ(Pieces(map, 5 * mib + 10, 3 * mib),
            (std::vector<Piece>{{5, 10, mib - 10}, {6, 0, mib}, {7, 0, mib}, {8, 0, 10}}));
  // Far into a large file.
  const uint64_t far = uint64_t{1} << 42;  // 4 TiB
  EXPECT_EQ(Pieces(map, far + 3, mib),
            (std::vector<Piece>{{far / mib, 3, mib - 3}, {far / mib + 1, 0, 3}}));
}

TEST(BlockMapTest, NonPowerOfTwoBlockSize) {
  const uint64_t bs = 37 * 1024;  // 37888
  BlockMap map(bs);
  EXPECT_EQ(Pieces(map, bs - 100, 200), (std::vector<Piece>{{0, bs - 100, 100}, {1, 0, 100}}));
  EXPECT_EQ(Pieces(map, 3 * bs, bs), (std::vector<Piece>{{3, 0, bs}}));
  // Power-of-two offsets do not line up with these blocks.
  EXPECT_EQ(Pieces(map, 65536, 65536),
            (std::vector<Piece>{{1, 65536 - bs, 2 * bs - 65536}, {2, 0, bs}, {3, 0, 131072 - 3 * bs}}));
}

TEST(BlockMapTest, ManyBlocks) {
  BlockMap map(512);
  const std::vector<Piece> pieces = Pieces(map, 100, 512 * 1000);
  ASSERT_EQ(pieces.size(), 1001u);
  EXPECT_EQ(pieces.front(), (Piece{0, 100, 412}));
  EXPECT_EQ(pieces.back(), (Piece{1000, 0, 100}));
}

TEST(BlockMapTest, StopsEarlyWhenVisitReturnsFalse) {
  BlockMap map(512);
  std::vector<uint64_t> seen;
  const bool finished = map.ForEachPiece(0, 512 * 10, [&](const BlockPiece& piece) {
    seen.push_back(piece.index);
    return piece.index < 3;  // stop after the fourth piece
  });
  EXPECT_FALSE(finished);
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 1, 2, 3}));

  // Stopping at the very first piece.
  int calls = 0;
  EXPECT_FALSE(map.ForEachPiece(700, 5000, [&](const BlockPiece&) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);

  // Returning false on the last piece still reports the stop.
  calls = 0;
  EXPECT_FALSE(map.ForEachPiece(0, 1024, [&](const BlockPiece& piece) {
    ++calls;
    return piece.index == 0;
  }));
  EXPECT_EQ(calls, 2);
}

TEST(BlockMapTest, RandomDecompositionsKeepInvariants) {
  std::mt19937_64 rng(7);
  for (uint64_t block_size :
       {uint64_t{1}, uint64_t{512}, uint64_t{1} << 20, uint64_t{37 * 1024}, uint64_t{4096}}) {
    // Exhaustive over small offsets/lengths around block boundaries.
    for (uint64_t offset : {uint64_t{0}, uint64_t{1}, block_size - 1, block_size, block_size + 1,
                            3 * block_size - 1}) {
      for (uint64_t length : {uint64_t{0}, uint64_t{1}, block_size - 1, block_size,
                              block_size + 1, 2 * block_size, 2 * block_size + 1}) {
        ASSERT_NO_FATAL_FAILURE(CheckDecomposition(block_size, offset, length));
      }
    }
    for (int i = 0; i < 300; ++i) {
      const uint64_t offset = rng() % (block_size * 50);
      const uint64_t length = rng() % (block_size * 8 + 1);
      ASSERT_NO_FATAL_FAILURE(CheckDecomposition(block_size, offset, length));
    }
  }
}

}  // namespace
}  // namespace stagio
