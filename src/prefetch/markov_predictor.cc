#include "prefetch/markov_predictor.h"

#include <algorithm>

namespace stagio {

MarkovPredictor::MarkovPredictor(size_t max_deltas, size_t max_successors)
    : max_deltas_(std::max<size_t>(max_deltas, 1)),
      max_successors_(std::max<size_t>(max_successors, 1)) {}

MarkovPredictor::Row& MarkovPredictor::RowFor(int64_t delta) {
  auto found = rows_.find(delta);
  if (found != rows_.end()) return found->second;
  if (rows_.size() >= max_deltas_) {
    rows_.erase(std::min_element(rows_.begin(), rows_.end(), [](const auto& a, const auto& b) {
      return a.second.last_seen < b.second.last_seen;
    }));
  }
  return rows_[delta];
}

void MarkovPredictor::Observe(const AccessHistory& history) {
  const size_t n = history.size();
  if (n < 3) return;
  const int64_t previous = StepTo(history, n - 2).delta;
  const Step latest = StepTo(history, n - 1);

  Row& row = RowFor(previous);
  row.last_seen = ++clock_;
  auto& successors = row.successors;
  auto same_delta = [&](const Successor& s) { return s.step.delta == latest.delta; };
  auto found = std::find_if(successors.begin(), successors.end(), same_delta);
  if (found == successors.end()) {
    if (successors.size() >= max_successors_) {
      successors.erase(std::min_element(
          successors.begin(), successors.end(),
          [](const Successor& a, const Successor& b) { return a.last_seen < b.last_seen; }));
    }
    found = successors.insert(successors.end(), Successor{});
  }
  found->step = latest;
  found->count = std::min(found->count + 1, kMaxCount);
  found->last_seen = clock_;
}

const MarkovPredictor::Successor* MarkovPredictor::Likeliest(int64_t delta) const {
  auto row = rows_.find(delta);
  if (row == rows_.end()) return nullptr;
  const Successor* best = nullptr;
  for (const Successor& s : row->second.successors) {
    if (best == nullptr || s.count > best->count ||
        (s.count == best->count && s.last_seen > best->last_seen)) {
      best = &s;
    }
  }
  return best != nullptr && best->count >= kMinCount ? best : nullptr;
}

std::vector<Access> MarkovPredictor::Predict(const AccessHistory& history, size_t count) const {
  std::vector<Access> predicted;
  const size_t n = history.size();
  if (n < 2) return predicted;
  Access current = history.back();
  int64_t delta = StepTo(history, n - 1).delta;
  while (predicted.size() < count) {
    const Successor* next = Likeliest(delta);
    if (next == nullptr) break;
    const std::optional<uint64_t> offset = ShiftOffset(current.offset, next->step.delta);
    if (!offset) break;
    current = {*offset, next->step.length};
    predicted.push_back(current);
    delta = next->step.delta;
  }
  return predicted;
}

}  // namespace stagio
