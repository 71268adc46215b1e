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
  if (IsFast(facts.storage_seconds_per_byte, facts.bytes)) {
    // Should writes turn slow, look again soon. Not for a read: a file whose reads come from
    // the page cache while its writes are slow would never let the gap grow.
    if (facts.write) reprobe_gap_ = kFirstReprobeAfter;
    return DirectReason::kFastStorage;
  }
  if (!facts.write) return DirectReason::kCached;
  if (!facts.reads_through_cache && facts.block_size > 0 && facts.bytes >= facts.block_size &&
      IsFast(facts.outside_seconds_per_byte, facts.bytes)) {
    return DirectReason::kNoTimeToHide;
  }
  return CachedOrReprobe(facts.bytes);
}

DirectReason DirectPolicy::CachedOrReprobe(uint64_t bytes) {
  if (reprobe_calls_left_ > 0) {
    --reprobe_calls_left_;
    return DirectReason::kProbe;
  }
  if (++cached_writes_ <= reprobe_gap_) return DirectReason::kCached;
  cached_writes_ = 0;
  reprobe_gap_ = std::min(2 * reprobe_gap_, kLongestReprobeGap);
  // Enough calls of this size to make one sample (StorageSpeed sums small requests).
  const uint64_t calls_for_min_bytes =
      (StorageSpeed::kMinSampleBytes + bytes - 1) / std::max<uint64_t>(1, bytes);
  const uint64_t per_sample =
      std::min<uint64_t>(StorageSpeed::kSmallRequestsPerSample, calls_for_min_bytes);
  reprobe_calls_left_ = static_cast<int>(per_sample) - 1;
  return DirectReason::kProbe;
}

double DirectPolicy::FastStorageSecondsPerByte(uint64_t bytes) {
  return kFastStorageSecondsPerByte +
         10 * kCachedCallSeconds / static_cast<double>(std::max<uint64_t>(1, bytes));
}

bool DirectPolicy::IsFast(std::optional<double> seconds_per_byte, uint64_t bytes) {
  return seconds_per_byte && *seconds_per_byte < FastStorageSecondsPerByte(bytes);
}

}  // namespace stagio
