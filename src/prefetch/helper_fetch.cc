#include "prefetch/helper_fetch.h"

#include <algorithm>

namespace stagio {

HelperFetchResult FetchForHelper(BlockCache& cache, uint64_t file_id,
                                 const std::vector<uint64_t>& blocks,
                                 const HelperFetchOptions& options,
                                 const std::atomic<bool>& cancelled,
                                 FunctionRef<bool()> still_wanted) {
  HelperFetchResult result;
  const uint64_t block_size = cache.BlockSizeOf(file_id);
  if (block_size == 0) return result;  // the file is gone
  std::vector<uint64_t> missing;
  for (uint64_t index : blocks) {
    if (cache.Announce(file_id, index)) {
      result.announced_bytes += block_size;
    } else {
      missing.push_back(index);
    }
  }
  const uint64_t max_blocks = std::max<uint64_t>(1, options.max_request_bytes / block_size);
  size_t start = 0;
  for (size_t i = 1; i <= missing.size(); ++i) {
    const bool run_ends = i == missing.size() || missing[i] != missing[i - 1] + 1 ||
                          i - start == max_blocks;
    if (!run_ends) continue;
    if (options.ppis && options.gate && options.gate->WaitForMainThread(cancelled)) {
      ++result.gate_waits;
    }
    if (cancelled.load()) break;
    if (!still_wanted()) {
      result.lagging = true;
      break;
    }
    const uint64_t count = static_cast<uint64_t>(i - start);
    const uint64_t epoch = cache.InvalidationEpoch(file_id);
    if (cache.PrefetchBlocks(file_id, missing[start], count, epoch) == PrefetchResult::kFailed) {
      result.failed = true;
      break;
    }
    result.announced_bytes += count * block_size;
    start = i;
  }
  return result;
}

}  // namespace stagio
