// BlockRunReader: a read with a pattern fetches the blocks one call misses in runs, one
// storage request per run of consecutive missing blocks, bounded by a quarter of the cache;
// cached blocks, blocks that do not follow on, and reads of requested bytes only are read
// piece by piece. Every test also checks the bytes that land in the buffer.
#include "mpiio/block_run_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/prefetch_cache_fixture.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

using Reads = std::vector<test_support::ReadLoggingBackend::ReadRecord>;
using test_support::Str;

// A contiguous buffer, or (`contiguous` false) one that takes its bytes through CopyIn only.
class StringDestination : public PieceDestination {
 public:
  StringDestination(uint64_t size, bool contiguous) : bytes_(size, '\x5a'), contiguous_(contiguous) {}
  char* Contiguous(uint64_t stream_offset) const override {
    return contiguous_ ? bytes_.data() + stream_offset : nullptr;
  }
  void CopyIn(uint64_t stream_offset, uint64_t length, const char* bytes) const override {
    bytes_.replace(stream_offset, length, bytes, length);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  mutable std::string bytes_;
  const bool contiguous_;
};

class BlockRunReaderTest : public test_support::PrefetchCacheFixture {
 protected:
  // The pieces [offset, offset + length) of file bytes, in file order, one stream after
  // another; the buffer gets what the reader read, and is compared with storage.
  struct Range {
    uint64_t offset;
    uint64_t length;
  };
  void ReadRanges(const std::vector<Range>& ranges, FetchScope scope = FetchScope::kWholeBlock,
                  bool contiguous = true) {
    uint64_t total = 0;
    std::string expected;
    for (const Range& range : ranges) {
      total += range.length;
      expected += Str(original_, range.offset, range.length);
    }
    StringDestination destination(total, contiguous);
    BlockRunReader reader(*cache_, kFile, kBlock, destination, scope);
    const BlockMap map(kBlock);
    uint64_t stream_offset = 0;
    for (const Range& range : ranges) {
      map.ForEachPiece(range.offset, range.length, [&](const BlockPiece& piece) {
        EXPECT_OK(reader.Add(piece, stream_offset));
        stream_offset += piece.length;
        return true;
      });
    }
    ASSERT_OK(reader.Finish());
    EXPECT_EQ(destination.bytes(), expected);
  }
  // One row piece of `length` bytes at `offset_in_block` of each block of [first, last].
  static std::vector<Range> RowPieces(uint64_t first, uint64_t last, uint64_t offset_in_block,
                                      uint64_t length) {
    std::vector<Range> ranges;
    for (uint64_t index = first; index <= last; ++index) {
      ranges.push_back({index * kBlock + offset_in_block, length});
    }
    return ranges;
  }
  static test_support::ReadLoggingBackend::ReadRecord Run(uint64_t first, uint64_t count) {
    return {first, 0, count * kBlock};
  }
};

TEST_F(BlockRunReaderTest, MissingConsecutiveBlocksAreOneRequestOfWholeBlocks) {
  Init(16 * kBlock, 16 * kBlock);
  ReadRanges(RowPieces(2, 5, 100, 300));
  EXPECT_EQ(backend_->reads(), (Reads{Run(2, 4)}));
  for (uint64_t index = 2; index <= 5; ++index) EXPECT_TRUE(cache_->Contains(kFile, index));
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u);
}

TEST_F(BlockRunReaderTest, SeveralPiecesOfOneBlockStayInTheRun) {
  Init(16 * kBlock, 16 * kBlock);
  ReadRanges({{0, 10}, {100, 10}, {kBlock + 5, 10}, {kBlock + 700, 10}, {2 * kBlock, 10}});
  EXPECT_EQ(backend_->reads(), (Reads{Run(0, 3)}));
}

TEST_F(BlockRunReaderTest, CachedBlockSplitsTheRunAndIsNotReadAgain) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(3, 0, kBlock);
  ReadRanges(RowPieces(1, 5, 0, 64));
  EXPECT_EQ(backend_->reads(), (Reads{Run(3, 1), Run(1, 2), Run(4, 2)}));
}

TEST_F(BlockRunReaderTest, UntouchedBlockBetweenPiecesIsNotFetched) {
  Init(16 * kBlock, 16 * kBlock);
  ReadRanges({{0, 50}, {kBlock, 50}, {3 * kBlock, 50}, {4 * kBlock, 50}});
  EXPECT_EQ(backend_->reads(), (Reads{Run(0, 2), Run(3, 2)}));
  EXPECT_FALSE(cache_->Contains(kFile, 2));
}

TEST_F(BlockRunReaderTest, RunSpansAtMostAQuarterOfTheCache) {
  Init(8 * kBlock, 16 * kBlock);  // runs of 2 blocks
  ReadRanges(RowPieces(0, 5, 10, 20));
  EXPECT_EQ(backend_->reads(), (Reads{Run(0, 2), Run(2, 2), Run(4, 2)}));
}

TEST_F(BlockRunReaderTest, TinyCacheReadsBlockByBlock) {
  Init(2 * kBlock, 8 * kBlock);
  ReadRanges(RowPieces(0, 2, 0, 8));
  EXPECT_EQ(backend_->reads(), (Reads{Run(0, 1), Run(1, 1), Run(2, 1)}));
}

TEST_F(BlockRunReaderTest, RunAtTheEndOfTheFileLeavesItsLastBlockWhole) {
  Init(16 * kBlock, 3 * kBlock + 100);
  ReadRanges({{2 * kBlock + 10, 20}, {3 * kBlock + 10, 90}});
  EXPECT_EQ(backend_->reads(), (Reads{Run(2, 2)}));
  // The block storage ends in is cached whole, as a miss leaves it, so it is not fetched again.
  EXPECT_TRUE(cache_->Contains(kFile, 3));
  ReadRanges({{3 * kBlock, 100}});
  EXPECT_EQ(backend_->reads().size(), 1u);
}

TEST_F(BlockRunReaderTest, PartlyCachedBlockJoinsTheRunOnlyForBytesItLacks) {
  Init(16 * kBlock, 16 * kBlock);
  // Block 2 holds bytes [100, 300) only, written with what storage has.
  ASSERT_OK(cache_->Write(kFile, 2, 100, 200, original_.data() + 2 * kBlock + 100));
  ReadRanges(RowPieces(1, 3, 100, 200));  // block 2's piece is among its cached bytes
  EXPECT_EQ(backend_->reads(), (Reads{Run(1, 1), Run(3, 1)}));
  ReadRanges(RowPieces(5, 7, 0, 200));
  ASSERT_OK(cache_->Write(kFile, 9, 100, 200, original_.data() + 9 * kBlock + 100));
  ReadRanges(RowPieces(8, 10, 50, 200));  // block 9's piece lacks [50, 100)
  EXPECT_EQ(backend_->reads(), (Reads{Run(1, 1), Run(3, 1), Run(5, 3), Run(8, 3)}));
}

TEST_F(BlockRunReaderTest, BufferThatIsNotContiguousGetsTheSameBytes) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(2, 0, kBlock);
  ReadRanges(RowPieces(0, 4, 7, 33), FetchScope::kWholeBlock, /*contiguous=*/false);
  EXPECT_EQ(backend_->reads(), (Reads{Run(2, 1), Run(0, 2), Run(3, 2)}));
}

TEST_F(BlockRunReaderTest, RequestedBytesAreReadPieceByPiece) {
  Init(16 * kBlock, 16 * kBlock);
  ReadRanges(RowPieces(0, 2, 100, 50), FetchScope::kRequestedBytes);
  EXPECT_EQ(backend_->reads(),
            (Reads{{0, 100, 50}, {1, 100, 50}, {2, 100, 50}}));
}

TEST_F(BlockRunReaderTest, FailedRunIsReportedAndCachesNothing) {
  Init(16 * kBlock, 16 * kBlock);
  backend_->set_fail_reads(true);
  StringDestination destination(2 * 64, true);
  BlockRunReader reader(*cache_, kFile, kBlock, destination,
                        FetchScope::kWholeBlock);
  EXPECT_OK(reader.Add({0, 0, 64}, 0));
  EXPECT_OK(reader.Add({1, 0, 64}, 64));
  EXPECT_FALSE(reader.Finish().ok());
  EXPECT_FALSE(cache_->Contains(kFile, 0));
  EXPECT_FALSE(cache_->Contains(kFile, 1));
}

}  // namespace
}  // namespace stagio
