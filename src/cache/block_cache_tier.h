// BlockCacheTier: the file's blocks in this process's block cache (or in its node's shared
// table, which the cache reaches through the file's registration), as a tier of its chain.
//
// Flush writes back the file's dirty blocks. Invalidate first drops the file's queued
// prefetches, so that none refills a block after it was dropped, then drops the clean blocks
// (other ranks wrote) or every block (the handle lets go, or storage changed under the cache).
// Dropping every block also drops dirty ones whose write-back failed: that failure was
// reported, and their bytes would otherwise overwrite storage's newer ones later.
//
// Only a call every rank makes (or a rank at MPI_Finalize) may drop dirty blocks. In the
// collective cache an owner's cache holds other ranks' writes, which a call of this rank alone
// (a call handed to PMPI) would throw away; so that call drops clean blocks only. For the same
// reason a node's shared table always drops clean blocks only: node-mates may still be
// writing theirs.
#pragma once

#include <cstdint>

#include "cache/block_cache.h"
#include "cache/io_thread.h"
#include "tiers/tier.h"

namespace stagio {

class BlockCacheTier : public Tier {
 public:
  BlockCacheTier(BlockCache* cache, IoThread* io_thread, uint64_t file_id)
      : cache_(cache), io_thread_(io_thread), file_id_(file_id) {}

  const char* name() const override { return "block cache"; }
  Status Flush(Callers callers) override;
  Status Invalidate(Callers callers, Staleness why) override;
  Status ForgetRange(uint64_t offset, uint64_t length) override;

 private:
  BlockCache* cache_;
  IoThread* io_thread_;
  uint64_t file_id_;
};

}  // namespace stagio
