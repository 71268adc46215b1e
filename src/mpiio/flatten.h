// Datatype flattening: an MPI datatype as the list of contiguous byte extents of its typemap.
//
// MPI describes memory layouts and file views with derived datatypes; stagio's data path moves
// bytes, so every datatype is reduced once to (offset, length) pairs in typemap order, relative
// to the datatype's origin (offsets may be negative). Adjacent extents are merged. The result is
// cached on the datatype itself as an MPI attribute, which MPI_Type_free deletes, so a freed
// handle that MPI reuses for a new type is never served the old type's flattening.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace stagio {

struct Extent {
  int64_t offset;   // bytes from the datatype's origin (or from the file start, for file views)
  uint64_t length;  // bytes
};

// Where one byte of a type's packed stream sits: extents[extent_index], offset_in_extent bytes in.
struct StreamPosition {
  size_t extent_index;
  uint64_t offset_in_extent;
};

struct FlatType {
  std::vector<Extent> extents;  // in typemap order; adjacent ones merged
  uint64_t size = 0;            // sum of lengths (MPI_Type_size)
  int64_t lb = 0;               // MPI_Type_get_extent lower bound
  int64_t extent = 0;           // MPI_Type_get_extent extent (the stride when tiling)
  // prefix[i] = stream bytes held by extents[0..i); filled by BuildPrefix() (Flatten does it).
  // Lets a walk start in the middle of a type with a binary search instead of a scan.
  std::vector<uint64_t> prefix;

  bool contiguous() const {     // one extent that fills the whole extent, starting at lb
    return extents.size() == 1 && extents[0].offset == lb &&
           static_cast<int64_t>(extents[0].length) == extent;
  }
  // True when consecutive copies touch end to start, so any run of copies is one piece
  // (like contiguous() but the single extent may start anywhere relative to lb).
  bool tiles_contiguously() const {
    return extents.size() == 1 && static_cast<int64_t>(extents[0].length) == extent;
  }

  // Recomputes `prefix` from `extents`; call after filling `extents` by hand.
  void BuildPrefix();

  // The extent holding stream byte `stream_offset` of ONE copy (requires stream_offset < size).
  // Uses `prefix` when it is up to date, a linear scan otherwise.
  StreamPosition Locate(uint64_t stream_offset) const;
};

// Flattens `type` (any combiner: named, dup, contiguous, vector, hvector, indexed, hindexed,
// indexed_block, hindexed_block, struct, subarray, darray, resized, f90 types, and the
// large-count constructors). Never returns null. Cached. Calls MPI (attribute functions), so
// call it from threads allowed to call MPI.
std::shared_ptr<const FlatType> Flatten(MPI_Datatype type);

// Drops every cached flattening (call when types may have been freed and handles reused).
void ClearFlattenCache();

// Walks `count` consecutive copies of `flat` laid out at `base` (copy i starts at
// base + i * flat.extent) and calls visit(pointer, length) for each contiguous piece of the
// byte stream [stream_begin, stream_begin + length), in stream order. The stream is the packed
// representation: copy 0's extents, then copy 1's, ...
// Pieces may be merged when they touch in memory. Stream bytes past count * flat.size are ignored.
template <typename Visit>
void ForEachMemoryPiece(char* base, const FlatType& flat, uint64_t count, uint64_t stream_begin,
                        uint64_t length, Visit visit);

// The building block of ForEachMemoryPiece and FileView: walks stream bytes
// [stream_begin, stream_begin + length) of flat tiled WITHOUT a count limit and calls
// visit(int64_t offset, uint64_t length) with offsets relative to copy 0's origin, in stream
// order, merging pieces that touch. flat.size == 0 visits nothing.
template <typename Visit>
void ForEachStreamPiece(const FlatType& flat, uint64_t stream_begin, uint64_t length,
                        Visit visit);

}  // namespace stagio

#include "mpiio/flatten_inl.h"
