// Steps: an access stream seen as the moves between consecutive accesses.
//
// Every predictor here describes the future the same way: from the newest access, move the
// offset by some delta and read some length, then move again. A Step is one such move. The
// sequential, strided and nested predictors differ only in which steps they expect to repeat,
// so continuing a cycle of steps, with the rule that no prediction goes below offset 0 (or past
// the largest offset), lives here once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "prefetch/access_history.h"

namespace stagio {

struct Step {
  int64_t delta = 0;    // offset of the access reached minus offset of the one before
  uint64_t length = 0;  // length of the access reached

  bool operator==(const Step& other) const {
    return delta == other.delta && length == other.length;
  }
  bool operator!=(const Step& other) const { return !(*this == other); }
};

// The step that led from `from` to `to`.
Step StepBetween(const Access& from, const Access& to);
// The step that led to history[i] (i >= 1).
inline Step StepTo(const AccessHistory& history, size_t i) {
  return StepBetween(history[i - 1], history[i]);
}

// offset + delta, or nothing if that is negative or does not fit in 64 bits.
std::optional<uint64_t> ShiftOffset(uint64_t offset, int64_t delta);

// Up to `count` accesses after `from`, taking the steps of `cycle` in order and starting over
// when it runs out. Stops early at the first offset ShiftOffset refuses. Empty `cycle`: none.
std::vector<Access> RepeatSteps(const Access& from, const std::vector<Step>& cycle,
                                size_t count);

}  // namespace stagio
