// NestedStridedPredictor: strides of strides, i.e. offset deltas that repeat with a period.
//
// Seed 000's "nested strided" pattern (its benchmark uses a (1 MB, 3 MB) stride pair): reading
// a block of a 2-D or 3-D subarray gives deltas like a,a,b,a,a,b (inner stride a, then a jump
// b to the next row), and a record read as a header then a body gives alternating lengths.
// Each move is a Step (delta and length of the access reached); the predictor looks for the
// smallest period p >= 2 such that each of the last p + 1 steps equals the step p before it.
// That needs 2p + 1 steps, i.e. 2p + 2 accesses: a full period seen twice plus one more
// confirmation, so a single coincidence cannot make a pattern. The default window of 8 thus
// finds periods 2 and 3; a window of 10 finds 4 (three nesting levels, a,b,a,c), and so on.
// A cycle of identical steps is a plain stride and is left to StridedPredictor.
//
// The prediction continues the cycle: the k-th next access takes the step of the same phase,
// so both its delta and its length follow the pattern.
#pragma once

#include "prefetch/predictor.h"

namespace stagio {

class NestedStridedPredictor : public Predictor {
 public:
  const char* name() const override { return "nested"; }
  std::vector<Access> Predict(const AccessHistory& history, size_t count) const override;
};

}  // namespace stagio
