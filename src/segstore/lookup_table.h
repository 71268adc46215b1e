// LookupTable: where the grouped pieces of files are, (file, byte range) -> (segment, offset in
// it), kept in memory (seed 002 §3.1). Pieces of one file never overlap; a read is cut into
// spans, each wholly inside one piece or wholly outside every piece, so a read that overlaps a
// piece partly takes the overlap from the segment and the rest from storage.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "segstore/extent.h"

namespace stagio {
namespace segstore {

// Where a span's first byte is. `epoch` is the segment slot's when the piece went in: a slot
// reused since holds another segment, and a reader that looked the piece up before must not
// take its bytes.
struct Placement {
  uint32_t segment = 0;
  uint64_t offset_in_segment = 0;
  uint64_t epoch = 0;
};

struct Span {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::optional<Placement> placed;  // none: the bytes are only on storage
};

class LookupTable {
 public:
  // Records that [offset, offset + length) of `file` is at `placement`. The range must not
  // overlap a recorded piece of the file (grouping places only what Resolve left unplaced).
  void Insert(const FileKey& file, uint64_t offset, uint64_t length, Placement placement);
  // [offset, offset + length) cut into spans, in file order, covering it exactly.
  std::vector<Span> Resolve(const FileKey& file, uint64_t offset, uint64_t length) const;
  // The parts of `extent` that no piece holds, in file order.
  std::vector<Extent> UnplacedParts(const Extent& extent) const;
  // The segments holding any byte of the range, each once.
  std::vector<uint32_t> SegmentsTouching(const FileKey& file, uint64_t offset,
                                         uint64_t length) const;
  std::vector<uint32_t> SegmentsOf(const FileKey& file) const;
  // Forgets every piece that `segment` holds.
  void RemoveSegment(uint32_t segment);
  size_t piece_count() const { return piece_count_; }

 private:
  struct Piece {
    uint64_t length = 0;
    Placement placement;
  };
  using Pieces = std::map<uint64_t, Piece>;  // by the piece's first offset

  // The first piece that ends after `offset`, in `pieces`.
  static Pieces::const_iterator FirstEndingAfter(const Pieces& pieces, uint64_t offset);

  std::map<FileKey, Pieces> files_;
  // What each segment holds: (file, piece offset), to remove it whole.
  std::unordered_map<uint32_t, std::vector<std::pair<FileKey, uint64_t>>> members_;
  size_t piece_count_ = 0;
};

}  // namespace segstore
}  // namespace stagio
