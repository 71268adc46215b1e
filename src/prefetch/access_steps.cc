#include "prefetch/access_steps.h"

#include <limits>

namespace stagio {

Step StepBetween(const Access& from, const Access& to) {
  // Unsigned subtraction wraps, and the cast reads the wrapped value as the signed distance;
  // exact for any two offsets less than 2^63 apart.
  return {static_cast<int64_t>(to.offset - from.offset), to.length};
}

std::optional<uint64_t> ShiftOffset(uint64_t offset, int64_t delta) {
  if (delta >= 0) {
    const uint64_t forward = static_cast<uint64_t>(delta);
    if (forward > std::numeric_limits<uint64_t>::max() - offset) return std::nullopt;
    return offset + forward;
  }
  // -(delta + 1) + 1 avoids negating INT64_MIN.
  const uint64_t backward = static_cast<uint64_t>(-(delta + 1)) + 1;
  if (backward > offset) return std::nullopt;
  return offset - backward;
}

std::vector<Access> RepeatSteps(const Access& from, const std::vector<Step>& cycle,
                                size_t count) {
  std::vector<Access> predicted;
  if (cycle.empty()) return predicted;
  predicted.reserve(count);
  Access current = from;
  for (size_t k = 0; k < count; ++k) {
    const Step& step = cycle[k % cycle.size()];
    const std::optional<uint64_t> offset = ShiftOffset(current.offset, step.delta);
    if (!offset) break;
    current = {*offset, step.length};
    predicted.push_back(current);
  }
  return predicted;
}

}  // namespace stagio
