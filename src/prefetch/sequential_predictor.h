// SequentialPredictor: streaming reads, each starting where the previous one ended.
//
// Seed 000's "streaming" pattern, the most common one. One back-to-back pair is enough here
// (two accesses, one confirmation): PredictorSelector trusts a predictor only once its one-step
// prediction has come true, so the selector prefetches after the third back-to-back read, i.e.
// after two confirmations. Asking for a second pair here as well would delay every stream by
// one more read, which matters for files read in a handful of large calls.
//
// The predicted reads have the newest read's length, the best guess for a stream of equal
// reads. (With reads of varying sizes the predicted offsets are still right, but the selector
// compares whole ranges, so such a stream does not count as predicted.)
#pragma once

#include "prefetch/predictor.h"

namespace stagio {

class SequentialPredictor : public Predictor {
 public:
  const char* name() const override { return "sequential"; }
  std::vector<Access> Predict(const AccessHistory& history, size_t count) const override;
};

}  // namespace stagio
