// MarkovPredictor: a first-order Markov chain on offset deltas (seed 000, step B).
//
// The window shows only the last few accesses, so a cycle longer than it (a sweep over ten
// tiles of a matrix in a fixed but irregular order) looks random to the other predictors. This
// one remembers, for each delta it has seen, which deltas followed it and how often, in its own
// table that outlives the window. To predict, it starts from the newest delta and keeps taking
// the most frequent successor (ties: the one seen most recently), stopping at the first delta
// with no successor seen at least twice. Requiring two sightings is what keeps random streams
// from predicting anything: a random pair of deltas almost never repeats.
//
// The table is bounded: at most `max_deltas` rows, each with at most `max_successors`
// successors; when full, the least recently seen one is replaced. Counts saturate at
// kMaxCount, so an old habit cannot outvote a new one for long, as with the saturating
// counters of branch predictors. Each successor also remembers the length of the access it
// last led to, which becomes the predicted length.
//
// The rows are few (256 by default), so eviction scans for the oldest instead of keeping an
// LRU list: a few hundred comparisons per new delta, next to a read call.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "prefetch/access_steps.h"
#include "prefetch/predictor.h"

namespace stagio {

class MarkovPredictor : public Predictor {
 public:
  static constexpr size_t kDefaultMaxDeltas = 256;
  static constexpr size_t kDefaultMaxSuccessors = 8;
  static constexpr uint32_t kMinCount = 2;
  static constexpr uint32_t kMaxCount = 16;

  explicit MarkovPredictor(size_t max_deltas = kDefaultMaxDeltas,
                           size_t max_successors = kDefaultMaxSuccessors);

  const char* name() const override { return "markov"; }
  // Counts the transition from the delta before history.back() to the delta that reached it.
  void Observe(const AccessHistory& history) override;
  std::vector<Access> Predict(const AccessHistory& history, size_t count) const override;
  void Reset() override { rows_.clear(); }

  // Deltas with a row in the table (for tests).
  size_t rows() const { return rows_.size(); }

 private:
  struct Successor {
    Step step;           // its delta, and the length of the access it last led to
    uint32_t count = 0;  // saturates at kMaxCount
    uint64_t last_seen = 0;
  };
  struct Row {
    uint64_t last_seen = 0;
    std::vector<Successor> successors;
  };

  Row& RowFor(int64_t delta);
  // The successor to predict after `delta`, or null if none was seen kMinCount times.
  const Successor* Likeliest(int64_t delta) const;

  size_t max_deltas_;
  size_t max_successors_;
  uint64_t clock_ = 0;  // counts transitions; orders "recently seen"
  std::unordered_map<int64_t, Row> rows_;
};

}  // namespace stagio
