// The data path: moving the bytes of one access between the application's buffer (described by
// a memory datatype) and the file (seen through the view), block piece by block piece, through
// the block cache.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "cache/block_cache.h"
#include "common/status.h"
#include "mpiio/flatten.h"
#include "mpiio/open_file.h"

namespace stagio {

struct Transfer {
  char* buffer;          // the application's buffer
  MPI_Count count;       // items of `datatype`
  MPI_Datatype datatype;
  uint64_t stream_begin; // first byte of the view's data stream (offset in etypes * etype size)
};

// The file extents of a read, cut where the file ends as this rank knows it (refreshing that
// size from storage once if the read reaches it); returns the readable stream bytes.
uint64_t ReadableExtents(OpenFile& file, const Transfer& transfer, std::vector<Extent>* extents);

// Cuts the extents (in file order) where the file ends at `end_of_file`: reads stop there.
// Returns the bytes kept.
uint64_t CutAtEndOfFile(uint64_t end_of_file, std::vector<Extent>* extents);

// Reads into the buffer; *bytes_read is how many stream bytes were read: fewer than asked for
// when the access reaches the end of the file as this rank knows it. Bytes of the buffer past
// that point are not touched.
// Misses fetch what `scope` says. In collective-cache mode the pieces other ranks own are read
// from them (remote_blocks.h), except in reads without a pattern (kRequestedBytes) while no
// owner may hold this rank's unwritten bytes (OpenFile::wrote_to_owners): those read the bytes
// asked for from storage, as per-rank caching does, in one request per sieved span.
Status ReadThroughCache(BlockCache& cache, OpenFile& file, const Transfer& transfer,
                        FetchScope scope, uint64_t* bytes_read);

// Writes the buffer into the cache as dirty bytes (into the owners' caches, in collective-cache
// mode) and grows the file's known size.
Status WriteThroughCache(BlockCache& cache, OpenFile& file, const Transfer& transfer);

// The number of bytes `count` items of `datatype` hold (MPI_Type_size times count).
uint64_t TransferBytes(MPI_Count count, MPI_Datatype datatype);

}  // namespace stagio
