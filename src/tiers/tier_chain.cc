#include "tiers/tier_chain.h"

namespace stagio {

void TierChain::Append(std::unique_ptr<Tier> tier) { tiers_.push_back(std::move(tier)); }

Status TierChain::Flush(Callers callers) {
  Status first = Status::OK();
  for (const std::unique_ptr<Tier>& tier : tiers_) {
    Status status = tier->Flush(callers);
    if (first.ok() && !status.ok()) first = std::move(status);
  }
  return first;
}

Status TierChain::Invalidate(Callers callers, Staleness why) {
  Status first = Status::OK();
  for (auto tier = tiers_.rbegin(); tier != tiers_.rend(); ++tier) {
    Status status = (*tier)->Invalidate(callers, why);
    if (first.ok() && !status.ok()) first = std::move(status);
  }
  return first;
}

Status TierChain::ForgetRange(uint64_t offset, uint64_t length) {
  Status first = Status::OK();
  for (const std::unique_ptr<Tier>& tier : tiers_) {
    Status status = tier->ForgetRange(offset, length);
    if (first.ok() && !status.ok()) first = std::move(status);
  }
  return first;
}

std::vector<std::string> TierChain::names() const {
  std::vector<std::string> names;
  for (const std::unique_ptr<Tier>& tier : tiers_) names.emplace_back(tier->name());
  return names;
}

}  // namespace stagio
