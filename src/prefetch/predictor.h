// Predictor: guesses the next reads of one access stream from its recent history (seed 000,
// step B: "streaming, strided, Markov, or advanced mining algorithms").
//
// Predictors are pure logic: no I/O, no clock, no threads. Each recognises one kind of pattern
// and says nothing (an empty prediction) when it does not see it, because a wrong prefetch
// costs bandwidth and cache space while no prefetch costs only the chance. PredictorSelector
// decides which one to believe.
//
// Contract: Observe is called once after every AccessHistory::Record, with history.back() the
// access just recorded; Predict may be called any number of times in between. Not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "prefetch/access_history.h"

namespace stagio {

class Predictor {
 public:
  virtual ~Predictor() = default;

  // "sequential", "strided", "nested" or "markov": for logs and stats.
  virtual const char* name() const = 0;

  // Learns from the access just recorded (history.back()). Predictors that read everything
  // they need from the window itself keep no state and ignore it.
  virtual void Observe(const AccessHistory& history) {}

  // Up to `count` accesses predicted to follow history.back(), in the order they will come.
  // Empty when this predictor sees no pattern. Never predicts a negative offset.
  virtual std::vector<Access> Predict(const AccessHistory& history, size_t count) const = 0;

  // Forgets whatever Observe learned (the access stream broke, e.g. after a set_view).
  virtual void Reset() {}
};

}  // namespace stagio
