// NodeBlockTable: one file's block cache, shared by the ranks of a node through shared memory.
//
// Why. The collective cache gave every block one home rank, and that rank's server thread
// answered the other ranks' misses one at a time: on one node, every rank's I/O waited behind
// one thread. Per-rank caches avoid the wait but keep a copy of a block per rank and read it
// from storage once per rank. Here the node is the unit of caching and no thread serves
// anyone: a hit is a copy out of the shared segment on the calling rank, and a miss is fetched
// by the rank that needs it, while other ranks fetch theirs. A rank that wants a block another
// rank is fetching waits for that fetch instead of reading the block again.
//
// Layout. Everything lives in one region that every rank maps (at its own address, so the
// table holds indices and offsets, never pointers): a header, the shards, the frames'
// metadata, the hash buckets, then the frames' bytes. Frames have the file's block size; frame
// f belongs to shard f % shards for its whole life, and a block goes to the shard its index
// hashes to, so a shard's lock guards its hash chains, its LRU list, its free list and its
// frames, and no operation ever holds two shard locks.
//
// Each frame keeps the bytes whose content is known (valid) and those written but not yet on
// storage (dirty, a subset of valid), as small fixed sets of ranges (ByteRanges). When a set is
// full the table gives up what costs nothing to lose: clean bytes are forgotten, and dirty ones
// are written back before more are added.
//
// Copies into and out of a frame happen under its shard's lock, which makes every read and
// write of a block atomic with respect to write-back; storage I/O never does. A frame records
// the fetches under way into it, each with its process's id and its bytes (FrameFetches:
// several at once, of different bytes), and the process writing it back (`flusher`); it is
// not evicted or reused meanwhile. A read waits only for a fetch that brings bytes it needs.
// A fetch fills only the bytes that are still not valid when it lands, so a write that came
// in during the fetch is never overwritten by older storage bytes. A write-back copies the
// dirty bytes out first; when it lands, the bytes written meanwhile stay dirty (all of them, if
// there were more pieces than the frame records), so storage ends with the newest bytes; two
// write-backs of one frame never run at once, which keeps them in order.
//
// Coherence between ranks follows MPI's rules: DropClean (at sync) forgets every clean byte and
// renews the table's epoch, and a fetch planned or started under an older epoch leaves nothing
// behind, so sync-barrier-sync always reaches storage.
//
// Failure. Any rank may die at any moment. Waits for another process's fetch or write-back are
// bounded and check that the process still lives; if it died, the waiter takes the frame over.
// A rank that dies holding a shard's lock may leave that shard half-changed: the table marks
// itself broken and every later call fails with an I/O error (never hangs). When a shard has no
// frame it can give, a call goes to storage directly (counted as a bypass) rather than wait.
//
// Memory. A frame takes its memory pages when it is first filled. In a table made with a
// budget (Layout::budgeted), a frame without pages is filled only as the node's NodeBudget
// allows, each process charging its own fills, and a table over its share gives pages back as
// it evicts (see node_budget.h); the last process to let go of the table gets what is still
// charged for it, to credit. Without one, every frame may take its pages: the table is then
// bounded by its own size only.
//
// Storage is reached through the calling rank's own BlockBackend (its own open of the file),
// which also takes its stats and prefetch outcomes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "cache/block_cache.h"
#include "cache/shared_block_store.h"
#include "common/status.h"
#include "node/byte_ranges.h"
#include "node/node_budget.h"

namespace stagio {

class NodeBlockTable : public SharedBlockStore {
 public:
  struct Layout {
    uint64_t frame_size = 1 << 20;  // the file's block size
    uint32_t frames = 64;
    // Fills of new frames are charged to the node's budget (the creator has one): every
    // process then charges its own through the budget it shares (ShareBudget).
    bool budgeted = false;
  };

  // Bytes of shared memory a table of this layout needs.
  static size_t BytesFor(const Layout& layout);
  // Lays out an empty table in `memory` (BytesFor(layout) bytes, any content); exactly one
  // process calls it, before any other attaches.
  static void Create(void* memory, const Layout& layout);

  // Attaches to a table Create laid out in `memory` (this process's mapping of it).
  explicit NodeBlockTable(void* memory);

  uint64_t frame_size() const;
  uint32_t frames() const;
  // Bytes written into the table and not yet on storage, over every rank of the node.
  uint64_t dirty_bytes() const override;
  uint64_t capacity_bytes() const override;
  // Renewed by DropClean and DiscardAll; a prefetch planned under an older one is stale.
  uint64_t epoch() const override;
  // True once a rank died holding one of the table's locks; every call then fails.
  bool broken() const;
  // Bytes of frames that hold their memory pages, over every rank of the node.
  uint64_t held_bytes() const;
  // Charges this process's fills of new frames to the node's budget (local to this process's
  // view of the table; every process of the node passes the same account), if the table is
  // budgeted.
  void ShareBudget(std::shared_ptr<NodeBudget> budget);
  // Counts a process's view of the table (the creator's is counted by Create) / lets it go.
  // The last view to go gets the bytes still charged to the budget for the table's frames,
  // for it to credit; every other gets none.
  bool budgeted() const;
  void AddView();
  std::optional<uint64_t> RemoveView();

  // Copies bytes [offset, offset + length) of block `index` into `out`, fetching what is not
  // cached: the whole block or only the missing bytes asked for, as `scope` says. Bytes past
  // the end of the storage file read as zeros.
  Status Read(BlockBackend& storage, uint64_t index, uint64_t offset, uint64_t length,
              char* out, FetchScope scope = FetchScope::kWholeBlock) override;
  // Copies file bytes [offset, offset + length), which may cross blocks, into `out`; the bytes
  // missing from the blocks this call claims are read with one storage request, so a read
  // without a pattern costs what it costs without stagio.
  Status ReadSpan(BlockBackend& storage, uint64_t offset, uint64_t length, char* out) override;
  // Copies `length` bytes into the block at `offset` and marks them dirty. Never reads storage;
  // writes to it only to make room.
  Status Write(BlockBackend& storage, uint64_t index, uint64_t offset, uint64_t length,
               const char* in) override;
  // Fetches bytes [begin, end) of the block ahead of use, unless they are cached, on their
  // way, or `epoch` is no longer the table's. A fetch of other bytes of the block under way
  // is waited out first.
  PrefetchResult Prefetch(BlockBackend& storage, uint64_t index, uint64_t begin, uint64_t end,
                          uint64_t epoch) override;
  // True if bytes [begin, end) of the block are cached or on their way (a fetch under way
  // brings the ones missing); the block then counts as recently used.
  bool Contains(uint64_t index, uint64_t begin, uint64_t end) override;

  // Forgets bytes [offset, offset + length) of the block, dirty or not, once no write-back of
  // its frame is on its way (BlockCache::ForgetBytes); a fetch on its way leaves nothing.
  Status Forget(BlockBackend& storage, uint64_t index, uint64_t offset,
                uint64_t length) override;
  // Writes back every dirty byte; returns the first error (every frame is attempted).
  Status FlushAll(BlockBackend& storage) override;
  // Writes back dirty frames, least recently modified first, until at most `target` dirty
  // bytes remain. Returns the first error.
  Status FlushOldestUntil(BlockBackend& storage, uint64_t target) override;
  // Forgets every clean byte (dirty ones stay) and renews the epoch.
  void DropClean(BlockBackend& storage) override;
  // Forgets everything, dirty bytes included, once no fetch or write-back is under way. Only
  // when no rank of the node uses the table any more.
  void DiscardAll(BlockBackend& storage);

  // Blocks currently held (tests, stats).
  uint32_t BlocksHeld();

 private:
  struct Header;
  struct Shard;
  struct Frame;
  class ShardAccess;

  // Writes back the frame's dirty bytes, with the shard's lock released around the I/O. Waits
  // for a write-back of the frame already under way (taking it over if its process died).
  static Status FlushFrameLocked(ShardAccess& access, uint32_t id, BlockBackend& storage);
  // The block's frame, made (evicting a clean block) if there is none. kNone if the shard has
  // no frame to give; *look_again if a dirty frame was written back to make room, with the
  // lock released meanwhile, so the caller must look again.
  uint32_t FindOrMakeFrame(ShardAccess& access, uint64_t index, BlockBackend& storage,
                           bool* look_again);
  // Serves bytes [begin, end) of a frame whose valid bytes cover them: copies them out and
  // counts the hit (and the first use of a prefetched block).
  static void ServeHit(ShardAccess& access, uint32_t id, uint32_t begin, uint32_t end, char* out,
                       bool waited, BlockBackend& storage);
  // The frame's dirty bytes once a write-back of `written_back` landed: the rest of its dirty
  // bytes, and those written while it was on its way. False if the sets have no room to say.
  static bool StillDirty(const Frame& frame, const ByteRanges& written_back,
                         ByteRanges* still_dirty);
  // Serves bytes [begin, end) of a frame whose fetch under way brings none of the bytes they
  // lack: the valid ones from the frame, the others straight from storage (one request), kept
  // nowhere. Releases the shard's lock.
  static Status ReadBesideFetch(ShardAccess& access, uint32_t id, BlockBackend& storage,
                                uint64_t index, uint32_t begin, uint32_t end, char* out);
  // Lands a fetch of bytes [span_begin, span_end) of a frame this process claimed, with the
  // lock held again: keeps the fetched bytes where they are still invalid and copies bytes
  // [begin, end) out of the frame. False, with nothing kept or copied, if bytes were forgotten
  // while the fetch was on its way (the epoch changed since `claim_epoch`, or the fetch went
  // `stale`), or if some of [begin, end) are still not valid: the caller must fetch again.
  bool LandFetch(ShardAccess& access, uint32_t id, uint32_t begin, uint32_t end,
                 uint32_t span_begin, uint32_t span_end, const char* fetched,
                 uint64_t claim_epoch, bool stale, char* out);

  Header* header_;
  std::shared_ptr<NodeBudget> budget_;
};

}  // namespace stagio
