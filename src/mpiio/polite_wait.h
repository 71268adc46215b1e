// Waiting for MPI requests without spinning.
//
// MPICH's blocking calls poll without pause. With more ranks than cores (the benchmarks here,
// and any node where ranks share cores with stagio's threads) a spinning rank takes the core
// that another rank's block-server thread needs to answer it, or that the rank it waits for
// needs to arrive. stagio's own waits therefore test with a growing pause instead, and its
// collectives are the nonblocking ones waited for this way. The pause never exceeds 100 µs,
// well below any storage request.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace stagio {

inline void WaitWithoutSpinning(int count, MPI_Request* requests,
                                MPI_Status* statuses = MPI_STATUSES_IGNORE) {
  int done = 0;
  // A request that completes within a few hundred microseconds (ranks on cores of their own,
  // a node-mate finishing its part of an open) must not wait for the timer: the shortest sleep
  // lasts the timer slack, 50 µs on Linux, and open and close wait for several collectives.
  // So the core is first yielded for a while, which lets any other runnable rank or thread
  // have it, as a pause would, and sleeping starts only after. 64 yields alone were over in
  // about 40 µs, and 1,000 opens and closes of small files at 2 ranks slept ~0.2 s longer.
  constexpr auto kYieldFor = std::chrono::microseconds(250);
  const auto stop_yielding = std::chrono::steady_clock::now() + kYieldFor;
  do {
    PMPI_Testall(count, requests, &done, statuses);
    if (done) return;
    std::this_thread::yield();
  } while (std::chrono::steady_clock::now() < stop_yielding);
  auto pause = std::chrono::microseconds(1);
  while (PMPI_Testall(count, requests, &done, statuses), !done) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(100));
  }
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
