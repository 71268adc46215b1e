// Prefetching for one open file: connects the file's FilePrefetcher to what it needs to know
// (the view, the file size, the cache) and hands its plans to the rank's I/O thread.
#pragma once

#include <cstdint>
#include <vector>

#include "cache/block_cache.h"
#include "common/config.h"
#include "mpiio/open_file.h"
#include "prefetch/file_prefetcher.h"

namespace stagio {

class Runtime;
struct Transfer;

// The prefetch settings of a file.
PrefetchConfig PrefetchConfigOf(const Settings& settings);

// What a read asks of prefetching: the scope of its own misses, and the blocks predicted to
// come next.
struct ReadPrefetch {
  FetchScope scope = FetchScope::kWholeBlock;
  std::vector<uint64_t> blocks;
};

// Called by a read before it touches the cache: records the access and plans.
ReadPrefetch PlanPrefetchForRead(Runtime& runtime, OpenFile& file, const Transfer& transfer,
                                 uint64_t bytes);

// Called once the read's own storage requests are done: queues the predicted blocks (sending
// those other ranks own to them, in collective-cache mode). Demand first: prefetches started
// with the read would share the device with it and delay the one call the application waits
// on. On the strided benchmark (4 ranks, 200 MB/s shared) the read that set prefetching off
// took 17 to 54 ms instead of 10 ms while its own prefetches competed with it.
void QueuePrefetches(Runtime& runtime, OpenFile& file, const std::vector<uint64_t>& blocks);

// True if the aggregators plan this file's prefetches from every rank's collective reads
// (stagio_prefetch=collective, or auto): only collective calls of collective-cache files.
bool UsesCollectivePrefetch(const OpenFile& file);

// Called after set_view: a view that predicts reads has its first blocks queued at once.
void PrefetchAfterSetView(Runtime& runtime, OpenFile& file);

}  // namespace stagio
