// Where stagio hands a call to the MPI library differently, by library, and why.
//
// stagio is built against one MPI library, so these are compile-time constants. Each works
// around a defect that plain MPI shows too; docs/mpi-implementations.md lists them for users,
// and the conformance tests (tests/conformance) check that stagio does no worse than plain MPI.
#pragma once

#include <mpi.h>

namespace stagio::engine {

#if defined(OPEN_MPI)
// OMPIO does not guard the progress of its pending file requests against two threads, and
// stagio's block server makes MPI calls on its own thread: passed-through nonblocking and split
// calls are done in their blocking form (blocking_form.h). ROMIO completes its file requests
// without that race, and its nonblocking calls do not always check what the blocking ones do
// (iread_shared reads a write-only file), so under MPICH the calls go to MPI as they are and
// the error classes stay plain MPICH's.
constexpr bool kBlockingFormForMpi = true;
// OMPIO's MPI_File_preallocate rewrites the file through the individual file pointer, so that
// for a moment the file holds its bytes twice over; a rank that looks at the size then skips
// a broadcast the others make, and later collectives of the file go out of step (wrong results,
// then a hang). Growing the file with MPI_File_set_size has the same visible effect.
constexpr bool kPreallocateBySetSize = true;
#else
constexpr bool kBlockingFormForMpi = false;
constexpr bool kPreallocateBySetSize = false;
#endif

}  // namespace stagio::engine
