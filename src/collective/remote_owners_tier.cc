#include "collective/remote_owners_tier.h"

#include "collective/remote_blocks.h"
#include "mpiio/polite_wait.h"

namespace stagio {

Status RemoteOwnersTier::Flush(Callers callers) {
  switch (callers) {
    case Callers::kEveryRank:
      BarrierWithoutSpinning(comm_);
      return Status::OK();
    case Callers::kThisRank:
      return FlushRemoteOwners(comm_, owners_, self_, /*drop=*/false);
    case Callers::kThisRankAlone:
      break;
  }
  return Status::OK();
}

Status RemoteOwnersTier::Invalidate(Callers callers, Staleness why) {
  switch (callers) {
    case Callers::kEveryRank:
      // Each owner invalidated its own cache through its own chain, below this tier.
      if (why == Staleness::kStorageChanged) BarrierWithoutSpinning(comm_);
      return Status::OK();
    case Callers::kThisRank:
      // Owners cannot tell stale clean blocks from others' fresh dirty ones, so they drop
      // clean blocks whatever the reason.
      return FlushRemoteOwners(comm_, owners_, self_, /*drop=*/true);
    case Callers::kThisRankAlone:
      break;
  }
  return Status::OK();
}

}  // namespace stagio
