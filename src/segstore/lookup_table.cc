#include "segstore/lookup_table.h"

#include <algorithm>

namespace stagio {
namespace segstore {

void LookupTable::Insert(const FileKey& file, uint64_t offset, uint64_t length,
                         Placement placement) {
  if (length == 0) return;
  files_[file][offset] = Piece{length, placement};
  members_[placement.segment].emplace_back(file, offset);
  ++piece_count_;
}

LookupTable::Pieces::const_iterator LookupTable::FirstEndingAfter(const Pieces& pieces,
                                                                   uint64_t offset) {
  auto it = pieces.upper_bound(offset);
  if (it != pieces.begin()) {
    auto before = std::prev(it);
    if (before->first + before->second.length > offset) return before;
  }
  return it;
}

std::vector<Span> LookupTable::Resolve(const FileKey& file, uint64_t offset,
                                       uint64_t length) const {
  std::vector<Span> spans;
  const uint64_t end = offset + length;
  auto unplaced = [&](uint64_t from, uint64_t to) {
    if (to > from) spans.push_back(Span{from, to - from, std::nullopt});
  };
  auto found = files_.find(file);
  if (found == files_.end()) {
    unplaced(offset, end);
    return spans;
  }
  uint64_t cursor = offset;
  for (auto it = FirstEndingAfter(found->second, offset);
       it != found->second.end() && it->first < end; ++it) {
    const uint64_t piece_start = it->first;
    const uint64_t piece_end = piece_start + it->second.length;
    unplaced(cursor, piece_start);
    const uint64_t from = std::max(cursor, piece_start);
    const uint64_t to = std::min(end, piece_end);
    Placement placement = it->second.placement;
    placement.offset_in_segment += from - piece_start;
    spans.push_back(Span{from, to - from, placement});
    cursor = to;
  }
  unplaced(cursor, end);
  return spans;
}

std::vector<Extent> LookupTable::UnplacedParts(const Extent& extent) const {
  std::vector<Extent> parts;
  for (const Span& span : Resolve(extent.file, extent.offset, extent.length)) {
    if (!span.placed) parts.push_back(Extent{extent.file, span.offset, span.length});
  }
  return parts;
}

std::vector<uint32_t> LookupTable::SegmentsTouching(const FileKey& file, uint64_t offset,
                                                    uint64_t length) const {
  std::vector<uint32_t> segments;
  for (const Span& span : Resolve(file, offset, length)) {
    if (span.placed) segments.push_back(span.placed->segment);
  }
  std::sort(segments.begin(), segments.end());
  segments.erase(std::unique(segments.begin(), segments.end()), segments.end());
  return segments;
}

std::vector<uint32_t> LookupTable::SegmentsOf(const FileKey& file) const {
  std::vector<uint32_t> segments;
  auto found = files_.find(file);
  if (found == files_.end()) return segments;
  for (const auto& [offset, piece] : found->second) segments.push_back(piece.placement.segment);
  std::sort(segments.begin(), segments.end());
  segments.erase(std::unique(segments.begin(), segments.end()), segments.end());
  return segments;
}

void LookupTable::RemoveSegment(uint32_t segment) {
  auto members = members_.find(segment);
  if (members == members_.end()) return;
  for (const auto& [file, offset] : members->second) {
    auto pieces = files_.find(file);
    if (pieces == files_.end()) continue;
    auto piece = pieces->second.find(offset);
    if (piece != pieces->second.end() && piece->second.placement.segment == segment) {
      pieces->second.erase(piece);
      --piece_count_;
    }
    if (pieces->second.empty()) files_.erase(pieces);
  }
  members_.erase(members);
}

}  // namespace segstore
}  // namespace stagio
