#include "tiers/tier_chain.h"

namespace stagio {

void TierChain::Append(std::unique_ptr<Tier> tier) { tiers_.push_back(std::move(tier)); }

template <typename Call>
Status TierChain::VisitAll(bool top_down, Call call) {
  Status first = Status::OK();
  for (size_t i = 0; i < tiers_.size(); ++i) {
    Tier& tier = *tiers_[top_down ? i : tiers_.size() - 1 - i];
    Status status = call(tier);
    if (first.ok() && !status.ok()) first = std::move(status);
  }
  return first;
}

Status TierChain::Flush(Callers callers) {
  return VisitAll(true, [&](Tier& tier) { return tier.Flush(callers); });
}

Status TierChain::Invalidate(Callers callers, Staleness why) {
  return VisitAll(false, [&](Tier& tier) { return tier.Invalidate(callers, why); });
}

Status TierChain::ForgetRange(uint64_t offset, uint64_t length) {
  return VisitAll(true, [&](Tier& tier) { return tier.ForgetRange(offset, length); });
}

std::vector<std::string> TierChain::names() const {
  std::vector<std::string> names;
  for (const std::unique_ptr<Tier>& tier : tiers_) names.emplace_back(tier->name());
  return names;
}

}  // namespace stagio
