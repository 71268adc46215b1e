// CollectivePrefetcher: collective prefetching at one aggregator (seed 000, Fig. 4-5).
//
// An aggregator sees every rank's part of each collective read, so it can learn every rank's
// pattern where a rank alone would learn only its own. It keeps the history of every rank's
// collective reads of one file (one Access per rank per call: the rank's first to last file
// byte), runs the pattern predictors (one PredictorSelector per rank) and proposes, per rank,
// the blocks of that rank's predicted next reads (PredictedBlocks). The caller filters the
// proposals (FilterProposals) against block ownership, the call's own blocks and the cache, and
// fetches the rest in contiguous runs.
//
// The depth is one for the file, not one per rank: the cache reports outcomes per block, not
// per rank, and it is the aggregator's cache space that the depth spends.
//
// Threading: Propose, Configure and Reset run on the application thread. OnOutcome may come
// from any thread, with a cache lock held; it touches only the depth (PrefetchDepth, under its
// own mutex).
#pragma once

#include <cstdint>
#include <vector>

#include "cache/block_cache.h"
#include "prefetch/access_history.h"
#include "prefetch/file_prefetcher.h"
#include "prefetch/predictor_selector.h"
#include "prefetch/prefetch_depth.h"

namespace stagio {

class CollectivePrefetcher {
 public:
  explicit CollectivePrefetcher(const PrefetchConfig& config);

  // New settings (set_info, set_view hints). A new block size restarts learning (histories and
  // depth); a new history window or depth bound applies to what was learned. The mode is the
  // caller's business.
  void Configure(const PrefetchConfig& config);
  // A new view: forgets every rank's history (the depth stays, as FilePrefetcher's does).
  void Reset();

  // One collective read: spans[r] is rank r's (first byte, last byte + 1 - first byte), length
  // 0 if it read nothing (then its history is not touched). Returns proposals[r]: the blocks of
  // rank r's predicted next accesses, nearest first, up to the adaptive depth in bytes per
  // rank, without rank r's blocks of this call and blocks at or past file_size. The number of
  // ranks may differ from the previous call: the histories of ranks that remain are kept.
  std::vector<std::vector<uint64_t>> Propose(const std::vector<Access>& spans,
                                             uint64_t file_size);

  void OnOutcome(PrefetchOutcome outcome) { depth_.OnOutcome(outcome); }
  uint64_t depth_bytes() const { return depth_.bytes(); }
  // The pattern predictor believed now for rank `rank`, or "none" (for logs and tests).
  const char* predictor(size_t rank) const;

 private:
  // One selector per rank of `ranks`, keeping those there are.
  void ResizeRanks(size_t ranks);

  PrefetchConfig config_;
  std::vector<PredictorSelector> selectors_;  // [r]: rank r's collective reads
  PrefetchDepth depth_;
};

}  // namespace stagio
