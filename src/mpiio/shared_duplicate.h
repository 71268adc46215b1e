// The private duplicate of an application communicator that stagio's own collectives run on,
// made once per communicator and kept on it as an MPI attribute, so that it goes when the
// communicator goes.
//
// Why: stagio must not mix its collectives with the application's, so it needs a duplicate.
// Duplicating is itself a collective (MPI agrees on a new context id), and made at every open
// it took 0.09-0.15 ms per file at 2 ranks, about ten times what plain MPI-IO spends opening,
// writing and closing a small file. Files of one communicator can share the duplicate: their
// collectives are made in the order the application makes its collective file calls, which is
// the same on every rank. Files that run a block server on their communicator (the collective
// cache across nodes) keep one of their own, since the server tells files apart by it.
#pragma once

#include <mpi.h>

namespace stagio {

// Collective over `comm` the first time for a communicator (every rank of a file's open asks,
// in the same order); afterwards local. MPI_COMM_NULL if MPI could not duplicate it. The
// duplicate is freed with `comm` (MPI_Comm_free, or MPI_Finalize for MPI_COMM_SELF); the
// caller must not free it.
MPI_Comm SharedDuplicate(MPI_Comm comm);

}  // namespace stagio
