#include "prefetch/nested_strided_predictor.h"

#include <algorithm>

#include "prefetch/access_steps.h"

namespace stagio {
namespace {

// True if each of the last p + 1 steps equals the step p before it.
bool RepeatsWithPeriod(const std::vector<Step>& steps, size_t p) {
  const size_t m = steps.size();
  if (m < 2 * p + 1) return false;
  for (size_t k = 0; k <= p; ++k) {
    if (steps[m - 1 - k] != steps[m - 1 - k - p]) return false;
  }
  return true;
}

}  // namespace

std::vector<Access> NestedStridedPredictor::Predict(const AccessHistory& history,
                                                    size_t count) const {
  std::vector<Step> steps;
  for (size_t i = 1; i < history.size(); ++i) steps.push_back(StepTo(history, i));

  for (size_t p = 2; 2 * p + 1 <= steps.size(); ++p) {
    if (!RepeatsWithPeriod(steps, p)) continue;
    // The next access repeats the step p back, so the cycle starts there.
    const std::vector<Step> cycle(steps.end() - p, steps.end());
    const bool plain_stride =
        std::all_of(cycle.begin(), cycle.end(), [&](const Step& s) { return s == cycle[0]; });
    if (plain_stride) return {};
    return RepeatSteps(history.back(), cycle, count);
  }
  return {};
}

}  // namespace stagio
