#include "cache/block_cache_tier.h"

namespace stagio {

Status BlockCacheTier::Flush(Callers /*callers*/) { return cache_->FlushFile(file_id_); }

Status BlockCacheTier::Invalidate(Callers callers, Staleness why) {
  io_thread_->DropPrefetches(file_id_);
  if (why != Staleness::kPeersWrote && callers != Callers::kThisRank) {
    cache_->DiscardFile(file_id_);
  } else {
    cache_->DropCleanBlocks(file_id_);
  }
  return Status::OK();
}

Status BlockCacheTier::ForgetRange(uint64_t offset, uint64_t length) {
  return cache_->ForgetBytes(file_id_, offset, length);
}

}  // namespace stagio
