// The segment store's lookup table: reads cut into spans inside and outside grouped pieces,
// partial overlaps, and the removal of a whole segment.
#include <gtest/gtest.h>

#include "segstore/lookup_table.h"

namespace stagio {
namespace segstore {
namespace {

const FileKey kFile{1, 10};
const FileKey kOther{1, 11};

// "offset+length@segment:offset_in_segment" per span, "-" for unplaced ones.
std::string Describe(const std::vector<Span>& spans) {
  std::string text;
  for (const Span& span : spans) {
    if (!text.empty()) text += " ";
    text += std::to_string(span.offset) + "+" + std::to_string(span.length);
    text += span.placed ? "@" + std::to_string(span.placed->segment) + ":" +
                              std::to_string(span.placed->offset_in_segment)
                        : "-";
  }
  return text;
}

TEST(LookupTableTest, AFileWithoutPiecesIsOneUnplacedSpan) {
  LookupTable table;
  EXPECT_EQ(Describe(table.Resolve(kFile, 100, 50)), "100+50-");
  EXPECT_TRUE(table.SegmentsTouching(kFile, 0, 1000).empty());
}

TEST(LookupTableTest, ReadsAreCutAtPieceBoundaries) {
  LookupTable table;
  table.Insert(kFile, 100, 100, Placement{3, 0});    // [100, 200) at segment 3, 0
  table.Insert(kFile, 300, 50, Placement{3, 100});   // [300, 350) at segment 3, 100
  table.Insert(kFile, 350, 50, Placement{7, 4096});  // [350, 400) at segment 7, 4096
  // Exactly a piece.
  EXPECT_EQ(Describe(table.Resolve(kFile, 100, 100)), "100+100@3:0");
  // Inside a piece: the offset in the segment follows.
  EXPECT_EQ(Describe(table.Resolve(kFile, 150, 10)), "150+10@3:50");
  // Overlapping the start and the end of pieces, with a gap and adjacent pieces.
  EXPECT_EQ(Describe(table.Resolve(kFile, 50, 400)),
            "50+50- 100+100@3:0 200+100- 300+50@3:100 350+50@7:4096 400+50-");
  // Partly over the end of one piece.
  EXPECT_EQ(Describe(table.Resolve(kFile, 190, 20)), "190+10@3:90 200+10-");
  // Another file's pieces are not this one's.
  EXPECT_EQ(Describe(table.Resolve(kOther, 100, 100)), "100+100-");
  EXPECT_EQ(table.piece_count(), 3u);
}

TEST(LookupTableTest, UnplacedPartsAreTheGapsBetweenPieces) {
  LookupTable table;
  table.Insert(kFile, 100, 100, Placement{3, 0});
  table.Insert(kFile, 300, 50, Placement{3, 100});
  EXPECT_EQ(table.UnplacedParts(Extent{kFile, 50, 350}),
            (std::vector<Extent>{Extent{kFile, 50, 50}, Extent{kFile, 200, 100},
                                 Extent{kFile, 350, 50}}));
  EXPECT_TRUE(table.UnplacedParts(Extent{kFile, 120, 30}).empty());
  EXPECT_EQ(table.UnplacedParts(Extent{kOther, 120, 30}),
            (std::vector<Extent>{Extent{kOther, 120, 30}}));
}

TEST(LookupTableTest, SegmentsTouchingARangeAreListedOnce) {
  LookupTable table;
  table.Insert(kFile, 0, 10, Placement{1, 0});
  table.Insert(kFile, 20, 10, Placement{1, 10});
  table.Insert(kFile, 40, 10, Placement{2, 0});
  EXPECT_EQ(table.SegmentsTouching(kFile, 5, 20), (std::vector<uint32_t>{1}));
  EXPECT_EQ(table.SegmentsTouching(kFile, 0, 100), (std::vector<uint32_t>{1, 2}));
  EXPECT_TRUE(table.SegmentsTouching(kFile, 10, 10).empty()) << "the gap between pieces";
  EXPECT_TRUE(table.SegmentsTouching(kFile, 50, 10).empty()) << "the byte after the last";
  EXPECT_EQ(table.SegmentsOf(kFile), (std::vector<uint32_t>{1, 2}));
}

TEST(LookupTableTest, RemovingASegmentForgetsItsPiecesInEveryFile) {
  LookupTable table;
  table.Insert(kFile, 0, 10, Placement{1, 0});
  table.Insert(kOther, 0, 10, Placement{1, 10});  // one group across two files
  table.Insert(kFile, 10, 10, Placement{2, 0});
  table.RemoveSegment(1);
  EXPECT_EQ(Describe(table.Resolve(kFile, 0, 20)), "0+10- 10+10@2:0");
  EXPECT_EQ(Describe(table.Resolve(kOther, 0, 10)), "0+10-");
  EXPECT_EQ(table.piece_count(), 1u);
  table.RemoveSegment(1);  // again: nothing left to remove
  table.RemoveSegment(2);
  EXPECT_EQ(table.piece_count(), 0u);
  EXPECT_TRUE(table.SegmentsOf(kFile).empty());
}

}  // namespace
}  // namespace segstore
}  // namespace stagio
