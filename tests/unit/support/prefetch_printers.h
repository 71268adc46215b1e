// gtest printers for the cache's prefetch enums, for readable failure messages. They are in
// namespace stagio, beside the enums, so that gtest finds them by argument-dependent lookup.
#pragma once

#include <ostream>

#include "cache/block_cache.h"

namespace stagio {

inline void PrintTo(PrefetchOutcome outcome, std::ostream* out) {
  switch (outcome) {
    case PrefetchOutcome::kUsedInTime: *out << "kUsedInTime"; return;
    case PrefetchOutcome::kUsedAfterWait: *out << "kUsedAfterWait"; return;
    case PrefetchOutcome::kOvertaken: *out << "kOvertaken"; return;
    case PrefetchOutcome::kWasted: *out << "kWasted"; return;
  }
  *out << "PrefetchOutcome(" << static_cast<int>(outcome) << ")";
}

inline void PrintTo(PrefetchResult result, std::ostream* out) {
  switch (result) {
    case PrefetchResult::kFetched: *out << "kFetched"; return;
    case PrefetchResult::kAlreadyCached: *out << "kAlreadyCached"; return;
    case PrefetchResult::kInFlight: *out << "kInFlight"; return;
    case PrefetchResult::kStale: *out << "kStale"; return;
    case PrefetchResult::kFailed: *out << "kFailed"; return;
  }
  *out << "PrefetchResult(" << static_cast<int>(result) << ")";
}

inline void PrintTo(FetchScope scope, std::ostream* out) {
  *out << (scope == FetchScope::kWholeBlock ? "kWholeBlock" : "kRequestedBytes");
}

}  // namespace stagio
