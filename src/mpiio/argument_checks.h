// Argument checks: what MPI-IO checks of a data access before it moves a byte, made so that a
// bad argument is reported the way plain MPI-IO reports it (an error class, through the file's
// error handler) and never as an error raised on a communicator.
//
// Why a communicator of its own. MPI has no call that asks whether a datatype handle is valid:
// every call that takes one checks it, and raises a failure on the communicator it concerns, or
// on MPI_COMM_WORLD (fatal by default) when it concerns none, as MPI_Type_size_x does. MPI_Pack
// concerns the communicator it is given, and checks its datatype as a send does: null, invalid,
// freed and uncommitted handles fail with MPI_ERR_TYPE. Packing zero items through a duplicate
// of MPI_COMM_SELF whose handler returns errors therefore asks exactly the question, without
// touching the application's communicators or their handlers.
//
// Threads: Check may be called from any thread once MPI allows that thread to call MPI.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace stagio {

class DatatypeChecker {
 public:
  // Between MPI_Init and MPI_Finalize only: the constructor duplicates MPI_COMM_SELF and the
  // destructor frees the duplicate.
  DatatypeChecker();
  ~DatatypeChecker();
  DatatypeChecker(const DatatypeChecker&) = delete;
  DatatypeChecker& operator=(const DatatypeChecker&) = delete;

  // MPI_SUCCESS, or MPI_ERR_TYPE for a null, invalid, freed or uncommitted datatype.
  int Check(MPI_Datatype datatype) const;

 private:
  MPI_Comm quiet_ = MPI_COMM_NULL;
};

// The bytes `count` items of a valid `datatype` hold, in *bytes. Fails with MPI_ERR_ARG, the
// class ROMIO gives a count whose byte size overflows, when they exceed the largest file
// offset (MPI_Offset): no file holds that much, and the product may not even fit 64 bits.
// `count` must not be negative.
int CheckTransferSize(MPI_Count count, MPI_Datatype datatype, uint64_t* bytes);

// The end of an access in the view's data stream: `position` etypes of `etype_size` bytes in,
// then `bytes` on. False if it lies past the largest file offset; `position` must not be
// negative.
bool StreamEnd(MPI_Offset position, uint64_t etype_size, uint64_t bytes, uint64_t* end);

}  // namespace stagio
