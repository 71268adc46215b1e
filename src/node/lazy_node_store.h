// LazyNodeStore: a file's node cache (NodeSegment) made when a rank of the node first puts a
// block in it, rather than at open.
//
// Why. Making the shared memory costs each rank about 100 µs per file (the system calls, and
// faulting in the table's metadata pages) and unmapping it 30 µs more, where plain MPI-IO
// opens, writes and closes a small file in 80 µs. A file whose calls all take the direct path
// (fast storage, direct_policy.h) never needs the table. So whichever rank of the node first
// reads, writes or prefetches a block through the cache makes it, and the others attach when
// they first do (NodeSegment::Place::first_comer_makes). Files whose ranks span several nodes
// make it at open instead, the node's first rank making it and the others attaching
// (MakeNow): there, whether every rank shares its node's table decides the blocks' homes, at
// open.
//
// A rank that has not attached holds nothing in the table, so what it owes its node-mates is
// small:
//  - DropClean (sync, invalidation) attaches first if the table exists: after
//    sync-barrier-sync this rank's next read must not find bytes older than the sync, whoever
//    brought them in.
//  - FlushAll, FlushOldestUntil and Forget (before a direct write) do nothing: this rank wrote
//    nothing into the table, the ranks that did flush it at their own sync or close, and the
//    table can hold dirty bytes of a direct write's range only from another rank's write with
//    no sync between the two, which MPI leaves undefined.
//  - Contains says no; a prefetch makes the table.
//  - Its epoch is one of its own, renewed by its DropClean: a prefetch planned before it
//    attached (after a probing read, a view, a pre-execution helper's first fetches) still
//    lands once it has, if no DropClean of this rank came between (the table's epoch then
//    stands in for it).
//
// A rank that cannot make or map the table keeps its blocks in a table of its own, in private
// memory, as large as its share of the node's: it caches on its own, as MPI's consistency
// rules allow. It says so once.
//
// Thread-safe: the application thread, the I/O thread and the prefetch threads share it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "cache/shared_block_store.h"
#include "node/node_block_table.h"
#include "node/node_segment.h"

namespace stagio {

class LazyNodeStore : public SharedBlockStore {
 public:
  // The node's table will be `place`'s, with frames of `block_size` for `bytes_per_rank` of
  // each node-mate (NodeSegment::Create); whichever rank first needs it makes it
  // (first_comer_makes is set here). `who` names this rank and file in the warning if it
  // cannot share the table.
  LazyNodeStore(NodeSegment::Place place, uint64_t block_size, uint64_t bytes_per_rank,
                std::string who);
  ~LazyNodeStore() override;
  LazyNodeStore(const LazyNodeStore&) = delete;
  LazyNodeStore& operator=(const LazyNodeStore&) = delete;

  // Makes or attaches to the node's table now, with the node's first rank making it
  // (`is_leader`, as at open across nodes, where every node-mate does this). True if this
  // rank shares it.
  bool MakeNow(bool is_leader);
  // The file is being closed on this rank (or its blocks are being cut anew): it attaches to
  // no table from now on, and prefetches still queued do nothing. Its DropClean at close has
  // no later read of this rank to protect, and an attachment only to drop would cost the
  // close a look for the table's name (7 µs here); a prefetch would make a table just to
  // lose it.
  void Closing() { closing_.store(true); }
  // False once this rank caches on its own (it could not make or map the node's table).
  bool shares_node_table() const { return !on_own_.load(); }
  // True once this rank has a table (the node's or its own).
  bool has_table() const { return active_.load() != nullptr; }

  Status Read(BlockBackend& storage, uint64_t index, uint64_t offset, uint64_t length,
              char* out, FetchScope scope) override;
  Status ReadSpan(BlockBackend& storage, uint64_t offset, uint64_t length, char* out) override;
  Status Write(BlockBackend& storage, uint64_t index, uint64_t offset, uint64_t length,
               const char* in) override;
  PrefetchResult Prefetch(BlockBackend& storage, uint64_t index, uint64_t begin, uint64_t end,
                          uint64_t epoch) override;
  bool Contains(uint64_t index, uint64_t begin, uint64_t end) override;
  uint64_t epoch() const override;
  Status Forget(BlockBackend& storage, uint64_t index, uint64_t offset,
                uint64_t length) override;
  Status FlushAll(BlockBackend& storage) override;
  Status FlushOldestUntil(BlockBackend& storage, uint64_t target_dirty_bytes) override;
  void DropClean(BlockBackend& storage) override;
  uint64_t dirty_bytes() const override;
  uint64_t capacity_bytes() const override;

 private:
  // Epochs this store hands out before it has a table carry this bit and the count of its
  // DropCleans.
  static constexpr uint64_t kBeforeTable = uint64_t{1} << 63;

  // The table this rank uses: made or attached to first if `make`; otherwise attached to only
  // if a node-mate made it. Null if there is none (and !make).
  NodeBlockTable* Table(bool make);
  // Makes or attaches to the node's table at `place`; falls back to a table of this rank's
  // own if that fails. Called under mutex_ with no table yet.
  NodeBlockTable* MakeOrAttach(const NodeSegment::Place& place);
  NodeBlockTable* MakeOwnTable();

  const NodeSegment::Place place_;
  const uint64_t block_size_;
  const uint64_t bytes_per_rank_;
  const uint64_t node_capacity_bytes_;
  const std::string who_;

  std::mutex mutex_;  // making or attaching
  std::atomic<NodeBlockTable*> active_{nullptr};
  std::atomic<bool> on_own_{false};
  std::atomic<bool> closing_{false};
  std::atomic<uint64_t> drops_{0};  // this rank's DropCleans
  std::unique_ptr<NodeSegment> segment_;
  // A table of this rank's own, in private memory, when it could not share the node's.
  void* own_memory_ = nullptr;
  size_t own_bytes_ = 0;
  std::unique_ptr<NodeBlockTable> own_table_;
  // This rank made the node's segment's name and then failed: the name (a door that says so)
  // is its to remove.
  bool remove_name_ = false;
};

}  // namespace stagio
