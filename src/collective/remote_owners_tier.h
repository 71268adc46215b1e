// RemoteOwnersTier: in the collective cache, the blocks this rank reads and writes in other
// ranks' caches (their owners'), as the top tier of the file's chain.
//
// This rank's writes to those blocks sit in the owners' caches. In a collective call every
// owner flushes and invalidates its own cache through its own chain, so this tier only makes
// sure, with a barrier, that every rank's writes have reached their owners before any owner
// does. In an individual call it asks each owner to write back (and to drop clean blocks when
// invalidating) and waits for the answers. At MPI_Finalize owners may no longer answer; each
// flushes what it holds.
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
