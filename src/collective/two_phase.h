// Two-phase collective I/O in collective-cache mode (seed 000, Fig. 3 and 4).
//
// A collective read or write of a file whose blocks are dealt over aggregators goes in two
// phases. First every rank learns every rank's file extents for the call (one allgather). The
// blocks they touch are each owned by one aggregator (BlockOwners), so the file domain of an
// aggregator is simply the set of touched blocks it owns; the touched span is walked in rounds
// of stagio_cb_buffer_size bytes per aggregator, which bounds the memory of an exchange. Then,
// per round, data moves in one MPI_Alltoallv on the file's private communicator: for a read,
// aggregators fetch their missing blocks, each maximal run of consecutive missing blocks in one
// storage request, and send every rank its pieces; for a write, every rank sends its pieces to
// their owners, which keep them dirty in their caches for write-back.
//
// Every rank computes the same rounds from the same extents, so all take part in every
// exchange even when they have nothing to move in it. A write ends with an allreduce: no rank
// leaves before every owner has its bytes, or its next independent write could overtake them. A failed storage read at an aggregator
// is reported to the ranks that wanted its data (each exchange segment starts with a flag).
//
// Collective prefetching happens here too (PlanCollectivePrefetch in the .cc): after a read,
// each aggregator runs the predictors on every rank's history, filters the proposals against
// each other, the call's own blocks and its cache, and queues the rest in contiguous runs.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "mpiio/data_path.h"
#include "mpiio/open_file.h"

namespace stagio {

class Runtime;

// Collective over file.comm; requires file.collective(). *bytes_read as ReadThroughCache.
// `collective_prefetch`: this call's aggregators plan prefetches from every rank's history.
Status TwoPhaseRead(Runtime& runtime, OpenFile& file, const Transfer& transfer,
                    bool collective_prefetch, uint64_t* bytes_read);
Status TwoPhaseWrite(Runtime& runtime, OpenFile& file, const Transfer& transfer);

}  // namespace stagio
