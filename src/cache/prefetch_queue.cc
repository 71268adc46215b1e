#include "cache/prefetch_queue.h"

#include <algorithm>

namespace stagio {

bool PrefetchQueue::Push(const PrefetchJob& job) {
  if (capacity_ == 0) return false;
  if (!queued_.insert({job.file_id, job.block_index}).second) return false;
  if (jobs_.size() >= capacity_) {
    const PrefetchJob& oldest = jobs_.front();
    queued_.erase({oldest.file_id, oldest.block_index});
    jobs_.pop_front();
  }
  jobs_.push_back(job);
  return true;
}

std::optional<PrefetchJob> PrefetchQueue::Pop() {
  if (jobs_.empty()) return std::nullopt;
  PrefetchJob job = jobs_.front();
  jobs_.pop_front();
  queued_.erase({job.file_id, job.block_index});
  return job;
}

void PrefetchQueue::DropFile(uint64_t file_id) {
  jobs_.erase(std::remove_if(jobs_.begin(), jobs_.end(),
                             [file_id](const PrefetchJob& job) { return job.file_id == file_id; }),
              jobs_.end());
  for (auto it = queued_.lower_bound({file_id, 0});
       it != queued_.end() && it->first == file_id;) {
    it = queued_.erase(it);
  }
}

}  // namespace stagio
