// DriverTier: the storage driver of a file (POSIX, or the iond client and its daemons) as the
// lowest tier of its chain.
//
// Flush makes what the driver holds reach the backing file system (the daemons write back);
// it is what close promises. Only storage that changed under the driver (PMPI wrote, or the
// size changed) makes a driver that caches forget: other ranks' writes came through the same
// daemons, which are the blocks' homes and already hold them.
#pragma once

#include "storage/driver.h"
#include "tiers/tier.h"

namespace stagio {

class DriverTier : public Tier {
 public:
  // `file` must outlive the tier (both belong to the same open file).
  explicit DriverTier(DriverFile* file) : file_(file) {}

  const char* name() const override { return "storage driver"; }
  Status Flush(Callers /*callers*/) override { return file_->Flush(); }
  Status Invalidate(Callers /*callers*/, Staleness why) override {
    return why == Staleness::kStorageChanged ? file_->Invalidate() : Status::OK();
  }

 private:
  DriverFile* file_;
};

}  // namespace stagio
