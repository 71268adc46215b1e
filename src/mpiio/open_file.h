// OpenFile: what stagio keeps about one MPI file handle it manages.
//
// The file is always opened through PMPI as well, and stagio mirrors every state change (view,
// atomicity, size, info) into that PMPI handle. That is what lets any call stagio does not model
// go straight to PMPI after a flush, and what lets the getters stagio does not wrap answer right.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <string>

#include "cache/block_owners.h"
#include "common/config.h"
#include "direct/direct_policy.h"
#include "mpiio/file_backend.h"
#include "mpiio/file_view.h"
#include "node/lazy_node_store.h"
#include "collective/remote_blocks.h"
#include "preexec/main_thread_progress.h"
#include "tiers/tier_chain.h"

namespace stagio {

struct SplitCollective {
  bool active = false;
  bool through_pmpi = false;  // the _begin went to PMPI, so the _end must too
  int error = MPI_SUCCESS;
  MPI_Count bytes = 0;
};

struct OpenFile {
  uint64_t id = 0;               // cache key; never reused within a process
  MPI_File handle = MPI_FILE_NULL;
  MPI_Comm comm = MPI_COMM_NULL; // private duplicate of the open communicator
  int comm_rank = 0;
  int comm_size = 1;
  // Collective-cache mode when it lists aggregators: block i lives only in the cache of
  // owners.OwnerOf(i), and collective calls run two-phase I/O. Empty: per-rank caching.
  BlockOwners owners;
  PrefetchHints prefetch_hints;  // sent to other owners, not yet taken by them
  // This rank wrote bytes into blocks other ranks own (not its node's), and no sync has since
  // written everything back: its reads must ask the owners, where those bytes may still be.
  std::atomic<bool> wrote_to_owners{false};
  // Node-cache mode, agreed by every rank at open: the ranks of each node share one cache of
  // the file's blocks. On one node there are no owners: every call is served on the calling
  // rank, collective calls too. Across nodes `owners` gives each block a home node (and
  // collective calls run two-phase over the owners).
  bool node_mode = false;
  // Node-cache mode: this rank's way to its node's cache, made when a rank first needs it
  // (on a rank that cannot share it, a cache of its own). Shared with the block cache's
  // registration, so that a helper or prefetch still holding the file's old registration
  // (after a block-size change or close) never touches unmapped memory.
  std::shared_ptr<LazyNodeStore> node;
  std::string path;              // as the application named it
  int amode = 0;
  Settings settings;
  FileView view;
  MPI_Offset individual_pointer = 0;  // in etypes of the view, as MPI defines it
  bool atomic = false;
  bool native = true;            // data representation "native"
  std::shared_ptr<FileBackend> backend;
  // Where coherence goes (file_tiers.h): every flush and invalidation of the file's cached
  // bytes is one call on it. Built at open; declared after `backend`, whose driver its last
  // tier uses, so that it goes first.
  TierChain tiers;
  SplitCollective split;
  // The main thread's data-access, sync and set_size calls, numbered for pre-execution helpers.
  std::shared_ptr<MainThreadProgress> progress = std::make_shared<MainThreadProgress>();
  // Pre-execution helpers that prefetch for the file now. While there is one, the file's
  // pattern and view prefetching step aside: the helper knows the reads, the predictors guess.
  std::atomic<int> preexec_helpers{0};

  // The direct path (direct/direct_access.h): which calls take it, and what coherence it owes.
  DirectPolicy direct_policy;
  // This rank wrote through the cache since its tiers were last flushed for a direct call: a
  // direct call must flush them first, so that storage holds this rank's own bytes.
  bool cached_writes = false;
  // This rank wrote around the cache since its tiers were last invalidated for it: the next
  // call through the cache must invalidate them first, so that no tier serves the old bytes.
  bool direct_writes = false;
  // This rank read through the cache: its block-sized writes then stay there even with no
  // time between calls (DirectCallFacts::reads_through_cache).
  bool cached_reads = false;

  // Calls stagio does not serve itself go to PMPI: atomic mode needs PMPI's locking, other
  // data representations need its conversions, and stagio_cache=disable asks for it.
  bool passthrough() const { return atomic || !native || !settings.cache_enabled; }
  bool is_rank0() const { return comm_rank == 0; }
  bool collective() const { return owners.collective(); }
  // This rank shares (or will share) its node's cache of the file.
  bool node_cached() const { return node != nullptr && node->shares_node_table(); }
};

}  // namespace stagio
