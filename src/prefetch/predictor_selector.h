// PredictorSelector: one access stream's history, every predictor, and which one to believe.
//
// Each predictor is judged on its record, not on its confidence: before an access is recorded,
// each predictor's one-step prediction (from the history before it) is compared with it, and a
// predictor that got it right (offset and length) scores a hit. Predict asks the predictor
// that was right most recently, and only if that was on the newest access or the one before.
// After a long run, one miss is forgiven because a predictor may still be right after it: the
// Markov chain continues from whichever branch was taken, and a window-bound predictor that
// lost its pattern simply predicts nothing. Two misses in a row mean the pattern is gone. A random
// stream makes no predictor right, so it gets no prefetches at all.
//
// A short run that breaks is a warning, not a phase change. Reading the blocks of a subarray
// (0,1,2, 10,11,12, ...), the sequential predictor is right inside each group and wrong at
// every jump; believed there, it would prefetch past the end of every group while the nested
// predictor is still learning the cycle. So a run of fewer than kShortRun hits that ends in a
// miss is not forgiven, and the predictor is believed again only once a new run is longer than
// the one that broke. A long run that breaks is a change of phase: its miss is forgiven, and
// the next run is believed from its first hit, so a new pattern is picked up at once.
//
// Ties (several predictors right on the same newest access) go first to the one with the
// longer run of consecutive hits, then to the priority order sequential, strided, nested,
// markov: the simpler pattern, which is also the one that confirms soonest. The run length
// matters for nested patterns: reading blocks 0,1,2, 10,11,12, 20,21,22, 30,31,32, the
// sequential predictor is right on 32 too, but its run starts there, while the nested one has
// been right since 22 and, unlike sequential, knows that 40 comes next.
//
// Zero-length reads are ignored: they touch no bytes, and in collective reads ranks with
// nothing to read make them in the middle of their real pattern.
//
// Not thread-safe: one selector belongs to one file handle's read stream.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "prefetch/access_history.h"
#include "prefetch/predictor.h"

namespace stagio {

class PredictorSelector {
 public:
  explicit PredictorSelector(size_t window = AccessHistory::kDefaultWindow);

  // Scores every predictor's one-step prediction against `access`, records it, and lets every
  // predictor learn from it.
  void Observe(const Access& access);
  // Up to `count` predicted accesses after the newest one, from the predictor chosen as above;
  // empty if none was right on either of the last two accesses.
  std::vector<Access> Predict(size_t count) const;
  // The chosen predictor's name, or "none".
  const char* current() const;
  // How many accesses in a row the chosen predictor got right (its run); 0 if none is chosen.
  uint64_t confirmed() const;

  // Forgets the history and every predictor's record and learning (a pattern break, such as
  // a new file view). Hit counts are statistics and survive.
  void Reset();
  void SetWindow(size_t window) { history_.SetWindow(window); }

  // How many accesses the named predictor predicted correctly; 0 for an unknown name.
  uint64_t hits(std::string_view predictor_name) const;
  const AccessHistory& history() const { return history_; }

  static constexpr size_t kPredictors = 4;
  // Runs of fewer hits than this that end in a miss put the predictor on probation (above).
  static constexpr uint64_t kShortRun = 4;

 private:
  struct Record {
    std::unique_ptr<Predictor> predictor;
    uint64_t last_hit = 0;  // sequence number of the last access it predicted; 0: never
    uint64_t run = 0;       // consecutive hits ending at last_hit
    uint64_t hits = 0;
    // Length of the last run that ended in a miss if it was short (< kShortRun); 0 if it was
    // long or there was none. A new run must be longer than this to be believed.
    uint64_t broken_short_run = 0;

    bool Believed(uint64_t sequence) const;
  };

  // The record of the predictor to believe now, or null.
  const Record* Chosen() const;

  AccessHistory history_;
  std::array<Record, kPredictors> records_;  // in priority order
  uint64_t sequence_ = 0;                    // accesses observed; the newest has this number
};

}  // namespace stagio
