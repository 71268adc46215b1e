// Tests for FileView. The oracle knows nothing of stagio's flattening: it asks MPI_Pack where
// every stream byte of a tiled filetype comes from, then merges consecutive positions itself.
#include "mpiio/file_view.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/mpi_type_helpers.h"

namespace stagio {
namespace {

using test_support::ExpectSameExtents;
using test_support::OwnedType;

// For each stream byte of `copies` tiled copies of `filetype`, its offset from copy 0's origin.
// Learned by packing from a buffer whose byte k holds one base-256 digit of k, once per digit:
// the packed bytes, put back together, spell out the buffer position each came from.
std::vector<int64_t> StreamBytePositions(MPI_Datatype filetype, int copies) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent_x(filetype, &lb, &extent);
  MPI_Type_get_true_extent_x(filetype, &true_lb, &true_extent);
  const int64_t low = std::min<int64_t>(0, true_lb);
  const int64_t high = true_lb + true_extent + (copies - 1) * static_cast<int64_t>(extent);
  std::vector<unsigned char> buffer(static_cast<size_t>(high - low));
  char* origin = reinterpret_cast<char*>(buffer.data()) - low;

  int pack_size = 0;
  MPI_Pack_size(copies, filetype, MPI_COMM_WORLD, &pack_size);
  std::vector<int64_t> positions;
  for (int digit = 0; digit < 4; ++digit) {
    for (size_t k = 0; k < buffer.size(); ++k) {
      buffer[k] = static_cast<unsigned char>(k >> (8 * digit));
    }
    std::vector<unsigned char> packed(static_cast<size_t>(pack_size));
    int used = 0;
    MPI_Pack(origin, copies, filetype, packed.data(), pack_size, &used, MPI_COMM_WORLD);
    positions.resize(static_cast<size_t>(used), 0);
    for (int s = 0; s < used; ++s) positions[s] |= static_cast<int64_t>(packed[s]) << (8 * digit);
  }
  for (int64_t& position : positions) position += low;
  return positions;
}

// The file extents of stream bytes [begin, begin + length), merged wherever consecutive bytes
// are consecutive in the file.
std::vector<Extent> BruteForceExtents(const std::vector<int64_t>& positions, int64_t displacement,
                                      uint64_t begin, uint64_t length) {
  std::vector<Extent> extents;
  for (uint64_t s = begin; s < begin + length; ++s) {
    const int64_t offset = displacement + positions.at(s);
    if (!extents.empty() &&
        extents.back().offset + static_cast<int64_t>(extents.back().length) == offset) {
      ++extents.back().length;
    } else {
      extents.push_back({offset, 1});
    }
  }
  return extents;
}

// Maps many ranges through the view, including ones that cross many filetype copies, and
// compares with the brute-force oracle; also checks ByteOffsetOfStream at every stream byte.
void ExpectViewMatchesOracle(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype) {
  constexpr int kCopies = 24;
  const FileView view(displacement, etype, filetype);
  const std::vector<int64_t> positions = StreamBytePositions(filetype, kCopies);
  MPI_Count filetype_size = 0, etype_size = 0;
  MPI_Type_size_x(filetype, &filetype_size);
  MPI_Type_size_x(etype, &etype_size);
  ASSERT_GT(filetype_size, 0);
  ASSERT_EQ(positions.size(), static_cast<size_t>(filetype_size) * kCopies);
  EXPECT_EQ(view.etype_size(), static_cast<uint64_t>(etype_size));
  EXPECT_EQ(view.displacement(), displacement);

  const uint64_t size = static_cast<uint64_t>(filetype_size);
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, size}, {0, 5 * size}, {size, size}, {size - 1, 2}, {3 * size, 1}, {0, 1}, {7, 0}};
  std::mt19937 random(2024);
  for (int trial = 0; trial < 300; ++trial) {
    const uint64_t begin = random() % (12 * size);
    const uint64_t length = random() % (trial % 3 == 0 ? 10 * size : size + 3);
    ranges.emplace_back(begin, length);
  }
  for (const auto& [begin, length] : ranges) {
    SCOPED_TRACE("begin " + std::to_string(begin) + " length " + std::to_string(length));
    std::vector<Extent> mapped = {{-1, 1}};  // MapStreamRange appends, never clears
    view.MapStreamRange(begin, length, &mapped);
    ASSERT_FALSE(mapped.empty());
    EXPECT_EQ(mapped.front().offset, -1);
    mapped.erase(mapped.begin());
    ExpectSameExtents(mapped, BruteForceExtents(positions, displacement, begin, length));
  }

  for (uint64_t s = 0; s < positions.size(); ++s) {
    ASSERT_EQ(view.ByteOffsetOfStream(s), displacement + positions[s]) << "stream byte " << s;
  }
}

// ---------------------------------------------------------------------------------------------

TEST(FileViewTest, DefaultViewIsTheWholeFile) {
  const FileView view;
  EXPECT_TRUE(view.is_contiguous());
  EXPECT_EQ(view.displacement(), 0);
  EXPECT_EQ(view.etype_size(), 1u);
  std::vector<Extent> mapped;
  view.MapStreamRange(10, uint64_t{1} << 40, &mapped);
  ExpectSameExtents(mapped, {{10, uint64_t{1} << 40}});
  EXPECT_EQ(view.ByteOffsetOfStream(12345), 12345);
  mapped.clear();
  view.MapStreamRange(3, 0, &mapped);
  EXPECT_TRUE(mapped.empty());
}

TEST(FileViewTest, ContiguousFiletypeMapsToOneExtent) {
  OwnedType contiguous;
  MPI_Type_contiguous(4, MPI_INT, contiguous.out());
  const FileView view(1000, MPI_INT, contiguous.Commit());
  EXPECT_TRUE(view.is_contiguous());
  EXPECT_EQ(view.etype_size(), 4u);
  std::vector<Extent> mapped;
  view.MapStreamRange(6, 1000000007, &mapped);
  ExpectSameExtents(mapped, {{1006, 1000000007}});
  EXPECT_EQ(view.ByteOffsetOfStream(16 * 5), 1000 + 80);
  ExpectViewMatchesOracle(1000, MPI_INT, contiguous.type);
}

TEST(FileViewTest, ByteViewWithDisplacement) {
  const FileView view(77, MPI_BYTE, MPI_BYTE);
  EXPECT_TRUE(view.is_contiguous());
  std::vector<Extent> mapped;
  view.MapStreamRange(0, 5, &mapped);
  ExpectSameExtents(mapped, {{77, 5}});
  ExpectViewMatchesOracle(77, MPI_BYTE, MPI_BYTE);
}

TEST(FileViewTest, Vector) {
  OwnedType vector;
  MPI_Type_vector(5, 2, 3, MPI_INT, vector.out());
  const FileView view(100, MPI_INT, vector.Commit());
  EXPECT_FALSE(view.is_contiguous());
  // Copy 0: ints 0-1, 3-4, 6-7, ...; the filetype's extent is 14 ints (56 bytes).
  std::vector<Extent> mapped;
  view.MapStreamRange(4, 12, &mapped);
  ExpectSameExtents(mapped, {{104, 4}, {112, 8}});
  ExpectViewMatchesOracle(100, MPI_INT, vector.type);
}

TEST(FileViewTest, VectorWhoseCopiesTouch) {
  // Blocks at 0 and 8 of 4 bytes each, extent 12: copy i's second block ends where copy i+1
  // begins, so the stream after the first block is one long run in the file.
  OwnedType hindexed, resized;
  const int blocklengths[] = {1, 1};
  const MPI_Aint displacements[] = {0, 8};
  MPI_Type_create_hindexed(2, blocklengths, displacements, MPI_INT, hindexed.out());
  MPI_Type_create_resized(hindexed.Commit(), 0, 12, resized.out());
  const FileView view(0, MPI_INT, resized.Commit());
  std::vector<Extent> mapped;
  view.MapStreamRange(4, 16, &mapped);  // copy 0 block 2, copy 1 both, copy 2 block 1
  ExpectSameExtents(mapped, {{8, 8}, {20, 8}});
  ExpectViewMatchesOracle(40, MPI_INT, resized.type);
}

TEST(FileViewTest, SubarrayCOrder) {
  OwnedType subarray;
  const int sizes[] = {8, 10};
  const int subsizes[] = {3, 4};
  const int starts[] = {2, 5};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, subarray.out());
  ExpectViewMatchesOracle(4096, MPI_DOUBLE, subarray.Commit());
  const FileView view(4096, MPI_DOUBLE, subarray.type);
  // The first visible byte is row 2, column 5.
  EXPECT_EQ(view.ByteOffsetOfStream(0), 4096 + (2 * 10 + 5) * 8);
  // The end of copy 0 is the start of copy 1's first element, one whole array further.
  EXPECT_EQ(view.ByteOffsetOfStream(3 * 4 * 8), 4096 + 8 * 10 * 8 + (2 * 10 + 5) * 8);
}

TEST(FileViewTest, Subarray3DFortranOrder) {
  OwnedType subarray;
  const int sizes[] = {4, 5, 6};
  const int subsizes[] = {4, 2, 3};  // full first dimension: runs of 4 elements merge
  const int starts[] = {0, 1, 2};
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT,
                           subarray.out());
  ExpectViewMatchesOracle(12, MPI_INT, subarray.Commit());
}

TEST(FileViewTest, IndexedStartingPastZero) {
  OwnedType indexed;
  const int blocklengths[] = {2, 1, 4};
  const int displacements[] = {1, 4, 6};
  MPI_Type_indexed(3, blocklengths, displacements, MPI_SHORT, indexed.out());
  ExpectViewMatchesOracle(6, MPI_SHORT, indexed.Commit());
  // The stream holds elements 1, 2, 4, 6, 7, 8, 9 of each copy. The type's lb is element 1,
  // so its extent is 9 shorts and copy i's origin is at i * 18 bytes.
  const FileView view(6, MPI_SHORT, indexed.type);
  EXPECT_EQ(view.ByteOffsetOfStream(0), 6 + 2);
  EXPECT_EQ(view.ByteOffsetOfStream(2 * 2), 6 + 4 * 2);       // the third short: element 4
  EXPECT_EQ(view.ByteOffsetOfStream(7 * 2), 6 + 18 + 1 * 2);  // copy 1's first: element 1
}

TEST(FileViewTest, ResizedWithPadding) {
  OwnedType contiguous, resized;
  MPI_Type_contiguous(3, MPI_INT, contiguous.out());
  MPI_Type_create_resized(contiguous.Commit(), 0, 20, resized.out());
  const FileView view(0, MPI_INT, resized.Commit());
  EXPECT_FALSE(view.is_contiguous());
  std::vector<Extent> mapped;
  view.MapStreamRange(0, 36, &mapped);
  ExpectSameExtents(mapped, {{0, 12}, {20, 12}, {40, 12}});
  ExpectViewMatchesOracle(64, MPI_INT, resized.type);
}

TEST(FileViewTest, ResizedWithPositiveLowerBound) {
  // Data at 16..24 and 30..32 of each 64-byte copy; lb 8 does not move the data.
  OwnedType hindexed, resized;
  const int blocklengths[] = {2, 1};
  const MPI_Aint displacements[] = {16, 30};
  MPI_Type_create_hindexed(2, blocklengths, displacements, MPI_INT, hindexed.out());
  MPI_Type_create_resized(hindexed.Commit(), 8, 64, resized.out());
  const FileView view(1000, MPI_INT, resized.Commit());
  EXPECT_EQ(view.ByteOffsetOfStream(0), 1000 + 16);
  EXPECT_EQ(view.ByteOffsetOfStream(12), 1000 + 64 + 16);
  ExpectViewMatchesOracle(1000, MPI_INT, resized.type);
}

TEST(FileViewTest, ContiguousDataWithPositiveLowerBoundIsNotIsContiguous) {
  // One 8-byte block at 8 with lb 8 and extent 8: the copies abut, so every range is one
  // extent, but the view does not start at the displacement.
  OwnedType hindexed, resized;
  const int blocklengths[] = {1};
  const MPI_Aint displacements[] = {8};
  MPI_Type_create_hindexed(1, blocklengths, displacements, MPI_DOUBLE, hindexed.out());
  MPI_Type_create_resized(hindexed.Commit(), 8, 8, resized.out());
  const FileView view(100, MPI_DOUBLE, resized.Commit());
  EXPECT_FALSE(view.is_contiguous());
  std::vector<Extent> mapped;
  view.MapStreamRange(3, 1000, &mapped);
  ExpectSameExtents(mapped, {{111, 1000}});
  ExpectViewMatchesOracle(100, MPI_DOUBLE, resized.type);
}

TEST(FileViewTest, DarrayFiletype) {
  const int gsizes[] = {9, 10};
  const int distribs[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  const int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, 3};
  const int psizes[] = {2, 2};
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    OwnedType darray;
    MPI_Type_create_darray(4, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_FLOAT,
                           darray.out());
    ExpectViewMatchesOracle(512, MPI_FLOAT, darray.Commit());
  }
}

TEST(FileViewTest, StructEtypeAndFiletype) {
  // etype of 12 bytes (3 ints), filetype: two etypes separated by a gap of one etype.
  OwnedType etype, filetype;
  MPI_Type_contiguous(3, MPI_INT, etype.out());
  MPI_Type_vector(2, 1, 2, etype.Commit(), filetype.out());
  const FileView view(24, etype.type, filetype.Commit());
  EXPECT_EQ(view.etype_size(), 12u);
  // MPI_File_get_byte_offset(offset 3) = stream byte 36: copy 1 (extent 36), second etype.
  EXPECT_EQ(view.ByteOffsetOfStream(3 * view.etype_size()), 24 + 36 + 24);
  // Offset 2 ends copy 0: the answer is the start of copy 1, not the gap after copy 0.
  EXPECT_EQ(view.ByteOffsetOfStream(2 * view.etype_size()), 24 + 36);
  ExpectViewMatchesOracle(24, etype.type, filetype.type);
}

TEST(FileViewTest, LongRangesAcrossManyCopies) {
  OwnedType vector;
  MPI_Type_vector(2, 1, 4, MPI_BYTE, vector.out());  // bytes 0 and 4, extent 5
  const FileView view(0, MPI_BYTE, vector.Commit());
  std::vector<Extent> mapped;
  // Byte 4 of copy i touches byte 0 of copy i+1 (at 5), so runs are 2 bytes long.
  view.MapStreamRange(1, 2000, &mapped);
  ASSERT_EQ(mapped.size(), 1000u);
  EXPECT_EQ(mapped.front().offset, 4);
  EXPECT_EQ(mapped.front().length, 2u);
  EXPECT_EQ(mapped.back().offset, 999 * 5 + 4);
  EXPECT_EQ(mapped.back().length, 2u);
}

}  // namespace
}  // namespace stagio
