// Datatype flattening: an MPI datatype as the list of contiguous byte extents of its typemap.
//
// MPI describes memory layouts and file views with derived datatypes; stagio's data path moves
// bytes, so every datatype is reduced once to (offset, length) pairs in typemap order, relative
// to the datatype's origin (offsets may be negative). Adjacent extents are merged. The result is
// cached per datatype handle; MPI may reuse a freed handle for a new type, so the cache also
// checks the type's envelope signature and is cleared when a file is closed.
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

struct FlatType {
  std::vector<Extent> extents;  // in typemap order; adjacent ones merged
  uint64_t size = 0;            // sum of lengths (MPI_Type_size)
  int64_t lb = 0;               // MPI_Type_get_extent lower bound
  int64_t extent = 0;           // MPI_Type_get_extent extent (the stride when tiling)
  bool contiguous() const {     // one extent that fills the whole extent, starting at lb
    return extents.size() == 1 && extents[0].offset == lb &&
           static_cast<int64_t>(extents[0].length) == extent;
  }
};

// Flattens `type` (any combiner: named, dup, contiguous, vector, hvector, indexed, hindexed,
// indexed_block, hindexed_block, struct, subarray, darray, resized, f90 types, and the
// large-count constructors). Never returns null. Cached; thread-safe.
std::shared_ptr<const FlatType> Flatten(MPI_Datatype type);

// Drops every cached flattening (call when types may have been freed and handles reused).
void ClearFlattenCache();

// Walks `count` consecutive copies of `flat` laid out at `base` (copy i starts at
// base + i * flat.extent) and calls visit(pointer, length) for each contiguous piece of the
// byte stream [stream_begin, stream_begin + length), in stream order. The stream is the packed
// representation: copy 0's extents, then copy 1's, ...
template <typename Visit>
void ForEachMemoryPiece(char* base, const FlatType& flat, uint64_t count, uint64_t stream_begin,
                        uint64_t length, Visit visit);

}  // namespace stagio

#include "mpiio/flatten_inl.h"
