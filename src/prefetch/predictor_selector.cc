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
    if (guess.empty() || guess[0] != access) continue;
    record.run = record.last_hit + 1 == sequence_ ? record.run + 1 : 1;
    record.last_hit = sequence_;
    ++record.hits;
  }
  history_.Record(access);
  for (Record& record : records_) record.predictor->Observe(history_);
}

const Predictor* PredictorSelector::Chosen() const {
  const Record* best = nullptr;
  for (const Record& record : records_) {
    // Right on the newest access or the one before (sequence_ >= 1 whenever last_hit is set).
    if (record.last_hit == 0 || record.last_hit + 1 < sequence_) continue;
    // Strictly better only, so that equals keep the earlier, higher-priority one.
    if (best == nullptr || record.last_hit > best->last_hit ||
        (record.last_hit == best->last_hit && record.run > best->run)) {
      best = &record;
    }
  }
  return best != nullptr ? best->predictor.get() : nullptr;
}

std::vector<Access> PredictorSelector::Predict(size_t count) const {
  const Predictor* chosen = Chosen();
  if (chosen == nullptr) return {};
  return chosen->Predict(history_, count);
}

const char* PredictorSelector::current() const {
  const Predictor* chosen = Chosen();
  return chosen != nullptr ? chosen->name() : "none";
}

void PredictorSelector::Reset() {
  history_.Clear();
  for (Record& record : records_) {
    record.predictor->Reset();
    record.last_hit = 0;
    record.run = 0;
  }
}

uint64_t PredictorSelector::hits(std::string_view predictor_name) const {
  for (const Record& record : records_) {
    if (predictor_name == record.predictor->name()) return record.hits;
  }
  return 0;
}

}  // namespace stagio
