// MPI_Init, MPI_Init_thread and MPI_Finalize: the STAGIO_MPI_LIFECYCLE rows of
// mpi_file_symbols.h. stagio starts once MPI runs and stops while it still does, because the
// engine needs MPI to read hints and to flush through PMPI at the end.
//
// The engine is told unconditionally: it is the one that reads STAGIO_DISABLE and decides
// whether to become active.
#include <mpi.h>

#include "interpose/mpi_file_symbols.h"
#include "mpiio/engine.h"

namespace engine = stagio::engine;

// MPI_Init asks for MPI_THREAD_SINGLE; stagio may need more for its own threads, and an
// application that gets more than it asked for is none the worse.
extern "C" STAGIO_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int wanted = engine::ThreadLevelToRequest(MPI_THREAD_SINGLE);
  int provided = MPI_THREAD_SINGLE;
  const int result = wanted == MPI_THREAD_SINGLE ? PMPI_Init(argc, argv)
                                                 : PMPI_Init_thread(argc, argv, wanted, &provided);
  if (result != MPI_SUCCESS) return result;
  // The implementation may give more than asked (MPICH's MPIR_CVAR_DEFAULT_THREAD_LEVEL); the
  // engine is told what it actually got.
  PMPI_Query_thread(&provided);
  engine::AfterInit(MPI_THREAD_SINGLE, &provided);
  return result;
}

extern "C" STAGIO_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required,
                                             int* provided) {
  const int result =
      PMPI_Init_thread(argc, argv, engine::ThreadLevelToRequest(required), provided);
  if (result != MPI_SUCCESS) return result;
  engine::AfterInit(required, provided);
  return result;
}

extern "C" STAGIO_EXPORT int MPI_Finalize(void) {
  engine::BeforeFinalize();
  return PMPI_Finalize();
}
