#include "direct/direct_policy.h"

#include <algorithm>

namespace stagio {

DirectMode ParseDirectMode(const std::string& text) {
  if (text == "always") return DirectMode::kAlways;
  if (text == "never") return DirectMode::kNever;
  if (text == "alternate") return DirectMode::kAlternate;
  return DirectMode::kAuto;
}

DirectReason DirectPolicy::Decide(DirectMode mode, const DirectCallFacts& facts) {
  switch (mode) {
    case DirectMode::kNever:
      return DirectReason::kCached;
    case DirectMode::kAlways:
      return DirectReason::kForced;
    case DirectMode::kAlternate:
      return alternate_calls_++ % 2 == 1 ? DirectReason::kForced : DirectReason::kCached;
    case DirectMode::kAuto:
      break;
  }
  if (facts.bytes > 0 &&
      static_cast<double>(facts.bytes) >=
      kLargeShareOfCache * static_cast<double>(facts.cache_capacity)) {
    return DirectReason::kLarge;
  }
  if (!facts.storage_seconds_per_byte) {
    return facts.bytes > 0 ? DirectReason::kProbe : DirectReason::kCached;
  }
  return IsFast(facts.storage_seconds_per_byte, facts.bytes) ? DirectReason::kFastStorage
                                                             : DirectReason::kCached;
}

double DirectPolicy::FastStorageSecondsPerByte(uint64_t bytes) {
  return kFastStorageSecondsPerByte +
         10 * kCachedCallSeconds / static_cast<double>(std::max<uint64_t>(1, bytes));
}

bool DirectPolicy::IsFast(std::optional<double> storage_seconds_per_byte, uint64_t bytes) {
  return storage_seconds_per_byte &&
         *storage_seconds_per_byte < FastStorageSecondsPerByte(bytes);
}

}  // namespace stagio
