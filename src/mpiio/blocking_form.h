// The blocking form of a nonblocking or split data-access call, for the calls stagio hands to
// MPI.
//
// Why: stagio's own threads (the collective cache's block server) make MPI calls, and in Open
// MPI every MPI call drives the progress of OMPIO's pending file requests, which OMPIO does
// not guard against two threads at once: an iwrite_shared or a read_ordered_begin handed to
// OMPIO while the block server waited for a message crashed in mca_common_ompio_progress.
// Doing the call in its blocking form leaves no OMPIO request pending, and MPI allows a
// nonblocking call to complete before it returns (a split collective's data may move in its
// _begin). The application gets an already completed request, or an _end, with the status.
#pragma once

#include <mpi.h>

#include "mpiio/engine.h"

namespace stagio::engine {

// Performs `call` (a kNonblocking or kSplitBegin one) with the blocking PMPI function of the
// same direction, positioning and collectiveness, on the same arguments. A nonblocking call
// gets in *call.request a completed request whose status counts the bytes moved; for a
// _begin, *split_bytes gets them, for its _end to report. Returns the call's error code (MPI
// has called the file's error handler for it, as it would have for the call itself).
int CallInBlockingForm(const AccessCall& call, MPI_Count* split_bytes);

// Performs `call` with the blocking PMPI function of the same direction, positioning and
// collectiveness, whatever its completion, on the same arguments; `status` as PMPI takes it.
int CallBlocking(const AccessCall& call, MPI_Status* status);

// The bytes `status` counts (0 when it counts none).
MPI_Count StatusBytes(const MPI_Status& status);

}  // namespace stagio::engine
