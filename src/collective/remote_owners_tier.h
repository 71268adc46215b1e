// RemoteOwnersTier: in the collective cache, the blocks this rank reads and writes in other
// ranks' caches (their owners'), as the top tier of the file's chain.
//
// This rank's writes to those blocks sit in the owners' caches. In a collective call every
// owner flushes and invalidates its own cache through its own chain, so this tier only makes
// sure, with a barrier, that every rank's writes have reached their owners before any owner
// does. In an individual call it asks each owner to write back (and to drop clean blocks when
// invalidating) and waits for the answers. At MPI_Finalize owners may no longer answer; each
// flushes what it holds.
//
// When storage changed under every tier (set_size, preallocate), each owner discards all it
// holds of the file, dirty blocks whose write-back failed included. A rank that returned first
// must not write into an owner that has not discarded yet, or its write would be discarded
// with the rest: this tier, the last to be invalidated, ends that call with a barrier.
#pragma once

#include <mpi.h>

#include <vector>

#include "tiers/tier.h"

namespace stagio {

class RemoteOwnersTier : public Tier {
 public:
  // `comm`: the file's private communicator; `owners`: its aggregators; `self`: this rank.
  RemoteOwnersTier(MPI_Comm comm, std::vector<int> owners, int self)
      : comm_(comm), owners_(std::move(owners)), self_(self) {}

  const char* name() const override { return "remote owners"; }
  Status Flush(Callers callers) override;
  Status Invalidate(Callers callers, Staleness why) override;

 private:
  MPI_Comm comm_;
  std::vector<int> owners_;
  int self_;
};

}  // namespace stagio
