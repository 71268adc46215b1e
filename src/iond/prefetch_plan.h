// The daemon's prefetch policy, seed 004 V-D: when an aggregator's demand read has been served,
// fetch the next file blocks mapped to the same aggregator.
//
// Clients spread their blocks (size B) round-robin over A aggregators, and each aggregator
// reads and writes only its own blocks: block c belongs to aggregator c mod A. A read request
// carries B and A, so the daemon knows that after client block b the same aggregator will next
// want b + A, b + 2A, ... It prefetches `depth` of those, each cut into daemon blocks (the
// daemon's block size may differ from B), stopping at the end of the file and after 1024 daemon
// blocks (the layout is the client's word, and a huge B must not make one read walk a file).
// A client prefetch is a demand read here, so the two levels chain, as in the seed.
#pragma once

#include <cstdint>
#include <vector>

#include "common/function_ref.h"

namespace stagio {
namespace iond {

struct ClientLayout {
  uint64_t block_size = 0;   // B; 0: unknown, use the daemon's block size
  uint64_t aggregators = 0;  // A; 0 counts as 1
};

// Consecutive daemon blocks to prefetch with one storage request.
struct BlockRun {
  uint64_t first = 0;
  uint64_t count = 0;
  bool operator==(const BlockRun& other) const {
    return first == other.first && count == other.count;
  }
};

// The daemon blocks to prefetch after a read of file bytes [offset, offset + length), length
// > 0, of a file of `file_size` bytes: the blocks of the next `depth` client blocks of the same
// aggregator, without those `cached(index)` says are cached or on their way, as runs.
std::vector<BlockRun> PlanPrefetch(uint64_t offset, uint64_t length, ClientLayout layout,
                                   uint64_t depth, uint64_t file_size,
                                   uint64_t daemon_block_size,
                                   FunctionRef<bool(uint64_t)> cached);

}  // namespace iond
}  // namespace stagio
