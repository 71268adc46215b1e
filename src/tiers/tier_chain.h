// TierChain: a file's tiers, from the one nearest the application to the one nearest storage.
//
// Flush goes top to bottom, so that what one tier writes back is in the next one before that
// one is flushed. Invalidate goes bottom to top, so that a tier that refills itself (a
// prefetch, another rank's miss) between two steps can only find bytes already made fresh
// below it. Both visit every tier even after one fails, so that a failure in one tier does not
// keep the others' bytes from storage, and return the first failure.
//
// Not thread-safe: the engine calls it on the application thread that owns the handle.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tiers/tier.h"

namespace stagio {

class TierChain {
 public:
  // Adds `tier` below the ones added before.
  void Append(std::unique_ptr<Tier> tier);

  Status Flush(Callers callers);
  Status Invalidate(Callers callers, Staleness why);
  // Every tier, top to bottom; returns the first failure.
  Status ForgetRange(uint64_t offset, uint64_t length);

  // The tiers' names, top to bottom.
  std::vector<std::string> names() const;

 private:
  // Calls call(tier) on every tier, top to bottom or bottom to top, even after one fails;
  // returns the first failure.
  template <typename Call>
  Status VisitAll(bool top_down, Call call);

  std::vector<std::unique_ptr<Tier>> tiers_;  // top first
};

}  // namespace stagio
