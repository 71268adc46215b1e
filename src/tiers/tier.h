// Tier: one level a file's bytes pass through on their way to storage (remote owners, the
// block cache, the storage driver), seen from the side of coherence: what it must do at an MPI
// consistency point.
//
// Every open file has one chain of tiers (tier_chain.h), built at open. At a consistency point
// (sync, close, set_size, preallocate, atomic mode, a call handed to PMPI) the engine makes one
// call on the chain, and the chain visits the tiers in the one order that is right for it. A
// new tier is one more class here, not an edit at every call site.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace stagio {

// Who makes the call, which decides what a tier may ask of other ranks.
enum class Callers {
  kEveryRank,      // a collective call: every rank of the file makes it, in the same order
  kThisRank,       // an individual call: other ranks take part only through their servers
  kThisRankAlone,  // at MPI_Finalize: no other rank answers; each looks after what it holds
};

// Why copies may be stale, which decides which tiers must forget them and what they forget.
enum class Staleness {
  // Other ranks' writes reached storage through their own chains (sync-barrier-sync), or PMPI
  // is about to read it: each rank's own copies of clean bytes must go. Tiers that are shared
  // by all writers (the daemons) saw those writes and stay.
  kPeersWrote,
  // The handle lets go of its cached state (close, a new block size, caching switched off):
  // everything this rank's tiers hold of the file goes, after the flush.
  kHandleReleased,
  // Storage changed under every tier (PMPI wrote, the file was truncated or preallocated):
  // every tier forgets everything, the lowest first, so that none refills from a stale one.
  kStorageChanged,
};

class Tier {
 public:
  virtual ~Tier() = default;

  // For logs and tests.
  virtual const char* name() const = 0;
  // Makes everything this tier holds dirty of the file reach the tier below it.
  virtual Status Flush(Callers callers) = 0;
  // Forgets the copies that `why` makes stale. Called after Flush where bytes must not be lost.
  virtual Status Invalidate(Callers callers, Staleness why) = 0;
  // This rank is about to write file bytes [offset, offset + length) to storage around the
  // chain (the direct path): forgets them, dirty or not, once no write-back carrying them is
  // on its way, so that no older copy can reach storage after the new bytes. Tiers that hold
  // no bytes of this rank's there have nothing to do.
  virtual Status ForgetRange(uint64_t offset, uint64_t length) { return Status::OK(); }
};

}  // namespace stagio
