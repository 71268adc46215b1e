#include "iond/daemon_file.h"

namespace stagio {
namespace iond {

uint64_t DaemonFile::PrefetchDepthFor(uint64_t client_block_size) {
  if (prefetch_off_) return 0;
  // The client's word: rounded up without the sum that could overflow.
  const uint64_t daemon_block = block_size();
  const uint64_t per_client_block =
      client_block_size > daemon_block
          ? client_block_size / daemon_block + (client_block_size % daemon_block != 0)
          : 1;
  {
    std::lock_guard<std::mutex> lock(outcomes_mutex_);
    if (per_client_block != blocks_per_client_block_) {
      blocks_per_client_block_ = per_client_block;
      pending_outcomes_.fill(0);
    }
  }
  return prefetch_depth_.bytes();
}

void DaemonFile::OnPrefetchOutcome(PrefetchOutcome outcome) {
  {
    std::lock_guard<std::mutex> lock(outcomes_mutex_);
    // A block used after a wait was used all the same.
    const PrefetchOutcome kind =
        outcome == PrefetchOutcome::kUsedAfterWait ? PrefetchOutcome::kUsedInTime : outcome;
    uint64_t& pending = pending_outcomes_[static_cast<size_t>(kind)];
    if (++pending < blocks_per_client_block_) return;
    pending = 0;
  }
  prefetch_depth_.OnOutcome(outcome);
}

}  // namespace iond
}  // namespace stagio
