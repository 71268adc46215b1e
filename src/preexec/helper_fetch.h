// FetchForHelper: how a pre-execution helper brings the bytes of one prefetch call that this
// rank caches into the cache, under PPIS scheduling.
//
// The helper knows the exact bytes the main thread will read, so it fetches those, not whole
// blocks: a random 64 KiB row costs what the main thread's own read of it would, not a 1 MiB
// block. The call's bytes come as spans (the caller sieves close extents into one span, as a
// read does). Pieces already cached are announced (BlockCache::Announce: kept until a read
// uses them); the missing ones are fetched in runs of consecutive bytes, one storage request
// per run and at most `max_request_bytes` each (but at least one block's piece), so that the
// helper passes the gate again between requests. Before each request the helper waits at the
// gate while the main thread is inside I/O (with `ppis`), then asks `still_wanted` whether the
// main thread has caught up meanwhile (then fetching is too late, and the rest of the call is
// skipped).
//
// Threading: the helper thread's.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "cache/block_cache.h"
#include "common/function_ref.h"
#include "preexec/io_priority_gate.h"

namespace stagio {

// File bytes [offset, offset + length).
struct ByteSpan {
  uint64_t offset;
  uint64_t length;
};

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

// `spans` in file order, not overlapping.
HelperFetchResult FetchForHelper(BlockCache& cache, uint64_t file_id,
                                 const std::vector<ByteSpan>& spans,
                                 const HelperFetchOptions& options,
                                 const std::atomic<bool>& cancelled,
                                 FunctionRef<bool()> still_wanted);

}  // namespace stagio
