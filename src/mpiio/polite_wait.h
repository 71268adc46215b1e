// Waiting for MPI requests without spinning.
//
// MPICH's blocking calls poll without pause. With more ranks than cores (the benchmarks here,
// and any node where ranks share cores with stagio's threads) a spinning rank takes the core
// that another rank's block-server thread needs to answer it, or that the rank it waits for
// needs to arrive. stagio's own waits therefore test with a polite pause instead
// (common/polite_pause.h), and its collectives are the nonblocking ones waited for this way.
// The pause never exceeds 100 µs, well below any storage request.
#pragma once

#include <mpi.h>

#include <chrono>

#include "common/polite_pause.h"

namespace stagio {

inline void WaitWithoutSpinning(int count, MPI_Request* requests,
                                MPI_Status* statuses = MPI_STATUSES_IGNORE) {
  PolitePause pause(std::chrono::microseconds(1), std::chrono::microseconds(100));
  int done = 0;
  while (PMPI_Testall(count, requests, &done, statuses), !done) pause();
}

// Runs a nonblocking collective started by `start(&request)` to completion without spinning;
// returns what the start returned.
template <typename Start>
int CollectiveWithoutSpinning(Start start) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = start(&request);
  if (rc == MPI_SUCCESS) WaitWithoutSpinning(1, &request);
  return rc;
}

inline void BarrierWithoutSpinning(MPI_Comm comm) {
  CollectiveWithoutSpinning([comm](MPI_Request* request) { return PMPI_Ibarrier(comm, request); });
}

}  // namespace stagio
