#include "preexec/helper_fetch.h"

#include <algorithm>

namespace stagio {

namespace {

// Splits the spans into their pieces in each block, announces the cached ones, and returns the
// missing ones merged into runs of consecutive bytes of at most `max_request` (a piece is
// never split).
std::vector<ByteSpan> MissingRuns(BlockCache& cache, uint64_t file_id, uint64_t block_size,
                                  const std::vector<ByteSpan>& spans, uint64_t max_request,
                                  uint64_t* announced) {
  std::vector<ByteSpan> runs;
  for (const ByteSpan& span : spans) {
    for (uint64_t at = span.offset; at < span.offset + span.length;) {
      const uint64_t index = at / block_size;
      const uint64_t begin = at - index * block_size;
      const uint64_t end = std::min(block_size, span.offset + span.length - index * block_size);
      const uint64_t length = end - begin;
      at += length;
      if (cache.Announce(file_id, index, begin, end)) {
        *announced += length;
        continue;
      }
      const uint64_t offset = index * block_size + begin;
      if (!runs.empty() && runs.back().offset + runs.back().length == offset &&
          runs.back().length + length <= max_request) {
        runs.back().length += length;
      } else {
        runs.push_back(ByteSpan{offset, length});
      }
    }
  }
  return runs;
}

}  // namespace

HelperFetchResult FetchForHelper(BlockCache& cache, uint64_t file_id,
                                 const std::vector<ByteSpan>& spans,
                                 const HelperFetchOptions& options,
                                 const std::atomic<bool>& cancelled,
                                 FunctionRef<bool()> still_wanted) {
  HelperFetchResult result;
  const uint64_t block_size = cache.BlockSizeOf(file_id);
  if (block_size == 0) return result;  // the file is gone
  const std::vector<ByteSpan> runs = MissingRuns(cache, file_id, block_size, spans,
                                                 options.max_request_bytes,
                                                 &result.announced_bytes);
  for (const ByteSpan& run : runs) {
    if (options.ppis && options.gate && options.gate->WaitForMainThread(cancelled)) {
      ++result.gate_waits;
    }
    if (cancelled.load()) break;
    if (!still_wanted()) {
      result.lagging = true;
      break;
    }
    const uint64_t epoch = cache.InvalidationEpoch(file_id);
    if (cache.PrefetchBytes(file_id, run.offset, run.length, epoch) == PrefetchResult::kFailed) {
      result.failed = true;
      break;
    }
    result.announced_bytes += run.length;
  }
  return result;
}

}  // namespace stagio
