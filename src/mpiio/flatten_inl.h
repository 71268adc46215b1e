// Template walkers over a FlatType's packed stream (included from flatten.h; do not include
// directly). They live in a header because the visitor is inlined into the data path.
#pragma once

#include <algorithm>
#include <cstdint>

#include "mpiio/flatten.h"

namespace stagio {

template <typename Visit>
void ForEachStreamPiece(const FlatType& flat, uint64_t stream_begin, uint64_t length,
                        Visit visit) {
  if (flat.size == 0 || length == 0) return;

  // Hot path: a type whose copies abut (MPI_BYTE, contiguous types, their resized forms with
  // the matching extent) maps any run of the stream to one piece, however many copies it spans.
  if (flat.tiles_contiguously()) {
    visit(flat.extents[0].offset + static_cast<int64_t>(stream_begin), length);
    return;
  }

  // Jump straight to the copy and extent holding the first byte.
  uint64_t copy = stream_begin / flat.size;
  const StreamPosition start = flat.Locate(stream_begin % flat.size);
  size_t index = start.extent_index;
  uint64_t skip = start.offset_in_extent;

  // Pieces that touch (the last extent of one copy and the first of the next, typically) are
  // held back and merged so callers see as few pieces as possible.
  int64_t pending_offset = 0;
  uint64_t pending_length = 0;
  while (length > 0) {
    const Extent& extent = flat.extents[index];
    const int64_t offset =
        static_cast<int64_t>(copy) * flat.extent + extent.offset + static_cast<int64_t>(skip);
    const uint64_t take = std::min(extent.length - skip, length);
    if (pending_length > 0 && pending_offset + static_cast<int64_t>(pending_length) == offset) {
      pending_length += take;
    } else {
      if (pending_length > 0) visit(pending_offset, pending_length);
      pending_offset = offset;
      pending_length = take;
    }
    length -= take;
    skip = 0;
    if (++index == flat.extents.size()) {
      index = 0;
      ++copy;
    }
  }
  if (pending_length > 0) visit(pending_offset, pending_length);
}

template <typename Visit>
void ForEachMemoryPiece(char* base, const FlatType& flat, uint64_t count, uint64_t stream_begin,
                        uint64_t length, Visit visit) {
  const uint64_t total = flat.size * count;
  if (flat.size == 0 || stream_begin >= total) return;
  length = std::min(length, total - stream_begin);
  ForEachStreamPiece(flat, stream_begin, length, [&](int64_t offset, uint64_t piece_length) {
    visit(base + offset, piece_length);
  });
}

}  // namespace stagio
