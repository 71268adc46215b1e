#include "iond/prefetch_plan.h"

#include <algorithm>

namespace stagio {
namespace iond {
namespace {

// A bound on the daemon blocks one read may plan, whatever layout a client claims: the plan is
// built on the request thread, and a huge client block would make it walk a whole file.
constexpr uint64_t kMaxPlannedBlocks = 1024;

}  // namespace

std::vector<BlockRun> PlanPrefetch(uint64_t offset, uint64_t length, ClientLayout layout,
                                   uint64_t depth, uint64_t file_size,
                                   uint64_t daemon_block_size,
                                   FunctionRef<bool(uint64_t)> cached) {
  std::vector<BlockRun> runs;
  if (length == 0 || daemon_block_size == 0) return runs;
  const uint64_t client_block = layout.block_size != 0 ? layout.block_size : daemon_block_size;
  const uint64_t stride = std::max<uint64_t>(1, layout.aggregators);
  const uint64_t last_touched = (offset + length - 1) / client_block;
  uint64_t planned = 0;
  for (uint64_t k = 1; k <= depth; ++k) {
    // The layout comes from the client: products that overflow lie past any file.
    uint64_t block = 0;
    uint64_t begin = 0;
    if (__builtin_mul_overflow(k, stride, &block) ||
        __builtin_add_overflow(block, last_touched, &block) ||
        __builtin_mul_overflow(block, client_block, &begin) || begin >= file_size) {
      break;  // later k only lie further out
    }
    const uint64_t end = std::min(file_size, begin + std::min(client_block, file_size - begin));
    for (uint64_t index = begin / daemon_block_size; index <= (end - 1) / daemon_block_size;
         ++index) {
      if (++planned > kMaxPlannedBlocks) return runs;
      if (cached(index)) continue;
      // Runs of adjacent client blocks (A = 1) or of one block's daemon blocks merge, so
      // storage sees one request each.
      if (!runs.empty() && runs.back().first + runs.back().count == index) {
        ++runs.back().count;
      } else if (runs.empty() || runs.back().first + runs.back().count < index) {
        runs.push_back({index, 1});
      }
    }
  }
  return runs;
}

}  // namespace iond
}  // namespace stagio
