#include "prefetch/sequential_predictor.h"

#include <cstdint>

#include "prefetch/access_steps.h"

namespace stagio {

std::vector<Access> SequentialPredictor::Predict(const AccessHistory& history,
                                                 size_t count) const {
  const size_t n = history.size();
  if (n < 2) return {};
  const Access& newest = history[n - 1];
  // Empty reads move nothing forward: a stream of them is not a stream.
  if (newest.length == 0 || newest.offset != history[n - 2].end()) return {};
  const Step next{static_cast<int64_t>(newest.length), newest.length};
  return RepeatSteps(newest, {next}, count);
}

}  // namespace stagio
