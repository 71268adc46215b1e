// PredictedBlocks: from predicted accesses to the blocks worth fetching ahead, for the
// per-handle prefetcher (FilePrefetcher) and the collective one (CollectivePrefetcher) alike.
//
// The depth is how much the cache can afford ahead of the reader, so blocks are taken nearest
// first (in the order the accesses are predicted to come) until it is covered. The reader's own
// blocks are left out, because the read that just happened fetches them itself, and so are
// blocks at or past the end of file, which hold nothing to fetch. Whether a block is cached is
// the caller's question: a cached block still counts towards the depth (it is as far ahead as
// any other), it just needs no fetch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "prefetch/access_history.h"

namespace stagio {

// How many accesses to ask a predictor for after a read of `read_length` bytes: enough to
// cover `depth` bytes with reads of that length, but never more than 64, so that tiny reads
// do not make prediction run on for ever.
size_t PredictionCount(uint64_t depth, uint64_t read_length);

// How far ahead a pattern is trusted: as many reads (of `read_length`, or of a block if
// smaller) as its predictor has got right in a row (`confirmed`), and never more than
// `depth`. A pattern seen once may be a coincidence, or the inner stride of a nested one: its
// first guesses cost the device little if they are wrong, and the depth opens up as the
// pattern proves itself, one read per confirmation.
uint64_t TrustedDepth(uint64_t depth, uint64_t confirmed, uint64_t read_length,
                      uint64_t block_size);

// The blocks of `predicted`, nearest first and each once, without the blocks of `span` (none
// if its length is 0) and those at or past `file_size`, until `depth` bytes' worth of blocks
// (at least one) are listed.
std::vector<uint64_t> PredictedBlocks(const std::vector<Access>& predicted, const Access& span,
                                      uint64_t block_size, uint64_t file_size, uint64_t depth);

}  // namespace stagio
