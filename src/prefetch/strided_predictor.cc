#include "prefetch/strided_predictor.h"

#include "prefetch/access_steps.h"

namespace stagio {

std::vector<Access> StridedPredictor::Predict(const AccessHistory& history,
                                              size_t count) const {
  const size_t n = history.size();
  if (n < 2) return {};
  const int64_t delta = StepTo(history, n - 1).delta;
  if (delta == 0) return {};
  return RepeatSteps(history.back(), {{delta, history.back().length}}, count);
}

}  // namespace stagio
