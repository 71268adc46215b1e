// FetchForHelper: how a pre-execution helper brings the blocks of one prefetch call that this
// rank caches into the cache, under PPIS scheduling.
//
// Blocks already cached are announced (BlockCache::Announce: kept until a read uses them). The
// others are fetched in runs of consecutive blocks, one storage request per run and at most
// `max_request_bytes` each, so that the helper passes the gate again between requests. Before
// each request the helper waits at the gate while the main thread is inside I/O (with `ppis`),
// then asks `still_wanted` whether the main thread has caught up meanwhile (then fetching is
// too late, and the rest of the call is skipped).
//
// Threading: the helper thread's.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "cache/block_cache.h"
#include "common/function_ref.h"
#include "prefetch/io_priority_gate.h"

namespace stagio {

struct HelperFetchOptions {
  IoPriorityGate* gate = nullptr;  // waited at before each request when `ppis`
  bool ppis = true;
  uint64_t max_request_bytes = 4ull << 20;
};

struct HelperFetchResult {
  uint64_t announced_bytes = 0;  // cached or fetched now: what the main thread will read
  uint64_t gate_waits = 0;       // requests that waited for the main thread's I/O
  bool lagging = false;          // stopped: the main thread caught up
  bool failed = false;           // stopped: a storage read failed
};

HelperFetchResult FetchForHelper(BlockCache& cache, uint64_t file_id,
                                 const std::vector<uint64_t>& blocks,
                                 const HelperFetchOptions& options,
                                 const std::atomic<bool>& cancelled,
                                 FunctionRef<bool()> still_wanted);

}  // namespace stagio
