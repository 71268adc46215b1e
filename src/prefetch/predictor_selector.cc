#include "prefetch/predictor_selector.h"

#include "prefetch/markov_predictor.h"
#include "prefetch/nested_strided_predictor.h"
#include "prefetch/sequential_predictor.h"
#include "prefetch/strided_predictor.h"

namespace stagio {

PredictorSelector::PredictorSelector(size_t window) : history_(window) {
  records_[0].predictor = std::make_unique<SequentialPredictor>();
  records_[1].predictor = std::make_unique<StridedPredictor>();
  records_[2].predictor = std::make_unique<NestedStridedPredictor>();
  records_[3].predictor = std::make_unique<MarkovPredictor>();
}

void PredictorSelector::Observe(const Access& access) {
  if (access.length == 0) return;
  ++sequence_;
  for (Record& record : records_) {
    const std::vector<Access> guess = record.predictor->Predict(history_, 1);
    if (guess.empty()) continue;
    if (guess[0] != access) {
      // Only the miss right after a run ends it; later misses change nothing.
      if (record.last_hit + 1 == sequence_) {
        record.broken_short_run = record.run < kShortRun ? record.run : 0;
      }
      continue;
    }
    record.run = record.last_hit + 1 == sequence_ ? record.run + 1 : 1;
    record.last_hit = sequence_;
    ++record.hits;
  }
  history_.Record(access);
  for (Record& record : records_) record.predictor->Observe(history_);
}

bool PredictorSelector::Record::Believed(uint64_t sequence) const {
  if (last_hit == 0) return false;
  // Right on the newest access, with a run longer than the short one that broke before.
  if (last_hit == sequence) return run > broken_short_run;
  // Right on the one before: the miss is forgiven after a long run only.
  return last_hit + 1 == sequence && broken_short_run == 0 && run >= kShortRun;
}

const PredictorSelector::Record* PredictorSelector::Chosen() const {
  const Record* best = nullptr;
  for (const Record& record : records_) {
    if (!record.Believed(sequence_)) continue;
    // Strictly better only, so that equals keep the earlier, higher-priority one.
    if (best == nullptr || record.last_hit > best->last_hit ||
        (record.last_hit == best->last_hit && record.run > best->run)) {
      best = &record;
    }
  }
  return best;
}

std::vector<Access> PredictorSelector::Predict(size_t count) const {
  const Record* chosen = Chosen();
  if (chosen == nullptr) return {};
  return chosen->predictor->Predict(history_, count);
}

const char* PredictorSelector::current() const {
  const Record* chosen = Chosen();
  return chosen != nullptr ? chosen->predictor->name() : "none";
}

uint64_t PredictorSelector::confirmed() const {
  const Record* chosen = Chosen();
  return chosen != nullptr ? chosen->run : 0;
}

void PredictorSelector::Reset() {
  history_.Clear();
  for (Record& record : records_) {
    record.predictor->Reset();
    record.last_hit = 0;
    record.run = 0;
    record.broken_short_run = 0;
  }
}

uint64_t PredictorSelector::hits(std::string_view predictor_name) const {
  for (const Record& record : records_) {
    if (predictor_name == record.predictor->name()) return record.hits;
  }
  return 0;
}

}  // namespace stagio
