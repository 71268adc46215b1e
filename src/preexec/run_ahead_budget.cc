#include "preexec/run_ahead_budget.h"

namespace stagio {

void RunAheadBudget::Add(std::shared_ptr<MainThreadProgress> main, uint64_t sequence,
                         uint64_t bytes) {
  if (bytes == 0) return;
  outstanding_ += bytes;
  announcements_.push_back(Announcement{std::move(main), sequence, bytes});
}

void RunAheadBudget::ReleaseConsumed() {
  // Announcements of different files finish out of order: look at all of them.
  for (auto it = announcements_.begin(); it != announcements_.end();) {
    if (it->main->finished() >= it->sequence || it->main->closed()) {
      outstanding_ -= it->bytes;
      it = announcements_.erase(it);
    } else {
      ++it;
    }
  }
}

const RunAheadBudget::Announcement* RunAheadBudget::MustWaitFor(uint64_t bytes) const {
  if (announcements_.empty() || outstanding_ + bytes <= limit_) return nullptr;
  return &announcements_.front();
}

}  // namespace stagio
