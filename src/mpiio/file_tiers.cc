#include "mpiio/file_tiers.h"

#include <memory>
#include <vector>

#include "cache/block_cache_tier.h"
#include "collective/remote_owners_tier.h"
#include "mpiio/runtime.h"
#include "storage/driver_tier.h"

namespace stagio {

void BuildTiers(Runtime& runtime, OpenFile& file) {
  file.tiers = TierChain();
  if (file.collective()) {
    // Node-mates' blocks are in this rank's own cache tier (the node's table).
    std::vector<int> remote;
    for (int owner : file.owners.aggregators()) {
      if (!file.owners.ShareACache(owner, file.comm_rank)) remote.push_back(owner);
    }
    file.tiers.Append(std::make_unique<RemoteOwnersTier>(file.comm, remote, file.comm_rank));
  }
  file.tiers.Append(
      std::make_unique<BlockCacheTier>(&runtime.cache(), &runtime.io_thread(), file.id));
  file.tiers.Append(std::make_unique<DriverTier>(file.backend->driver_file()));
}

void InvalidateTiers(OpenFile& file, Callers callers, Staleness why) {
  Status status = file.tiers.Invalidate(callers, why);
  if (!status.ok()) file.backend->RecordWriteBackError(status);
}

}  // namespace stagio
