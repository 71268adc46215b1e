// StridedPredictor: reads whose offsets move by the same delta every time.
//
// Seed 000's "strided" pattern: a rank reading its column of a row-major array, or every k-th
// record. The delta may be negative (reading backwards) or equal to the length (then the reads
// are also sequential; SequentialPredictor sees that sooner and wins the tie in the selector).
// It proposes the newest delta as the stride. A single delta is no evidence by itself, but the
// predictor is not the judge: the selector believes it only once a proposal came true, i.e.
// after two equal deltas in a row. Proposing from one delta means the pattern is believed on
// the third access instead of the fourth, which is one demand miss fewer for every strided
// stream. A delta of 0 re-reads the same bytes, which are already cached: nothing to prefetch,
// so no pattern.
//
// Predicted reads have the newest read's length.
#pragma once

#include "prefetch/predictor.h"

namespace stagio {

class StridedPredictor : public Predictor {
 public:
  const char* name() const override { return "strided"; }
  std::vector<Access> Predict(const AccessHistory& history, size_t count) const override;
};

}  // namespace stagio
