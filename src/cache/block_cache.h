// BlockCache: the per-process cache of file blocks, a sharded LRU charged by bytes.
//
// Design. Blocks are keyed by (file id, block index). Each shard has its own mutex, hash map
// and LRU list (front = most recently used); a block lives in exactly one shard, chosen so that
// consecutive blocks of a file land in different shards. Each block has a buffer of the file's
// block size (its charge), the byte ranges whose content is known (`valid`) and the byte ranges
// written but not yet on storage (`dirty`, a subset of valid).
//
// I/O never happens under a shard lock. A block being fetched is marked `loading` and one being
// written back `flushing`; other threads that need it wait on the shard's condition variable.
// A fetch fills only the bytes that are not valid when it lands, so writes that arrive during a
// fetch are never overwritten by older storage data. A flush copies the dirty bytes out first;
// if the block is written again while the copy is on its way, the block stays dirty and is
// flushed again, so storage always ends with the newest bytes. Two flushes of one block never
// run at once, which keeps them ordered.
//
// Runs of blocks. FetchBlocks (a demand, for collective reads) and PrefetchBlocks (the I/O
// thread) read a range of whole blocks with one storage request per maximal run of consecutive
// blocks that are neither cached nor on their way, because storage serves one large request far
// better than many block-sized ones. Such a run spans several shards, so the fetch goes in
// three passes that never hold two shard locks at once: claim each block under its shard's lock
// (pin it, mark it `loading`), read each run with no lock held, then land each block under its
// shard's lock (fill the bytes still invalid, clear `loading`, notify, evict as capacity
// requires). A demand fetch waits for blocks other threads are fetching only after its own
// blocks have landed, so it never waits while it holds blocks `loading`, and two fetches of
// overlapping ranges cannot wait on each other.
//
// Prefetching. The I/O thread fills whole blocks ahead of use with Prefetch. A prefetched block
// that no read has used yet, or a cached block a pre-execution helper announced (Announce), is
// kept out of eviction while older used blocks can go, unless nothing else is left. A read that finds the block still being prefetched waits for that
// fetch instead of reading it again. Each prefetch carries the file's invalidation epoch from
// when it was planned: DropCleanBlocks and DiscardFile bump it, so a prefetch planned before
// a sync can never bring pre-sync data into the cache after it. How each prefetched block
// turned out (used in time, used after a wait, overtaken by a demand fetch, wasted) goes to the
// file's backend, which counts it and adapts the prefetch depth.
//
// Capacity is a target: pinned blocks (in use by a caller) and dirty blocks whose write-back
// failed are never dropped, so the cache may exceed it rather than lose data. When a shard is
// over capacity, clean blocks are evicted from the LRU end; if only dirty ones are left, the
// caller writes the least recently used one back and evicts it.
//
// Threading: all methods are thread-safe. The application thread reads and writes; the I/O
// thread writes back (FlushOldestUntil).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cache/dirty_range_map.h"
#include "common/stats.h"
#include "common/status.h"

namespace stagio {

// What became of a block that was prefetched.
enum class PrefetchOutcome {
  kUsedInTime,     // a read found it in the cache
  kUsedAfterWait,  // a read found it still on its way and waited for it
  kOvertaken,      // a read fetched the block itself before the queued prefetch ran
  kWasted,         // evicted before any read used it (stays last: arrays count kinds by it)
};

// What a read that misses fetches from storage.
enum class FetchScope {
  kWholeBlock,      // the whole block: later reads of the block hit
  kRequestedBytes,  // only the missing bytes asked for: random access pays no more than MPI-IO
};

// Where the cache reads missing blocks from and writes dirty bytes to: one per open file.
class BlockBackend {
 public:
  virtual ~BlockBackend() = default;
  // Reads `length` bytes at `offset_in_block` of block `index` into `buffer`; the range may
  // run on into the following blocks. *bytes_read < length means end of file.
  virtual Status ReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length,
                           char* buffer, uint64_t* bytes_read) = 0;
  // Writes `length` bytes at `offset_in_block` of block `index`. Called for dirty ranges only.
  virtual Status WriteRange(uint64_t index, uint64_t offset_in_block, const char* data,
                            uint64_t length) = 0;
  // Called when a background write-back of this file fails, so that the error can be reported
  // at the file's next sync or close.
  virtual void RecordWriteBackError(const Status& status) = 0;
  virtual FileStats* stats() = 0;
  // Called with a cache lock held (it must not call back into the cache), on any thread.
  virtual void OnPrefetchOutcome(PrefetchOutcome outcome) {}
};

class SharedBlockStore;

enum class PrefetchResult {
  kFetched,        // the block was read from storage into the cache
  kAlreadyCached,  // every byte was already there (a demand read got there first)
  kInFlight,       // another thread is fetching it
  kStale,          // the file was invalidated (sync, close) since the prefetch was planned
  kFailed,         // the storage read failed; nothing was cached
};

class BlockCache {
 public:
  BlockCache(uint64_t capacity_bytes, uint64_t typical_block_size);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // Files must be registered before their blocks are touched, and unregistered only after
  // DiscardFile. The backend must stay alive until UnregisterFile returns. UnregisterFile waits
  // for prefetches of the file still under way and removes what they brought, so that a new
  // registration of the same file (another block size) never finds blocks of the old one.
  //
  // A file registered with a `store` keeps its blocks there (the node cache, shared by the
  // ranks of a node): every call for the file goes to the store, and this cache holds none of
  // its blocks. DiscardFile then only drops clean bytes, since other ranks may still write.
  void RegisterFile(uint64_t file_id, std::shared_ptr<BlockBackend> backend, uint64_t block_size,
                    std::shared_ptr<SharedBlockStore> store = nullptr);
  void UnregisterFile(uint64_t file_id);

  // Copies bytes [offset, offset + length) of block `index` of the file into `out`, fetching
  // from the backend on a miss what `scope` says. Bytes past the end of the storage file read
  // as zeros (the caller clips reads at the file size it knows). Fails only if the fetch fails.
  Status Read(uint64_t file_id, uint64_t index, uint64_t offset, uint64_t length, char* out,
              FetchScope scope = FetchScope::kWholeBlock);
  // Copies file bytes [offset, offset + length), which may cross blocks, into `out`, fetching
  // only the missing bytes, all in one storage request: a read of the file without a pattern
  // costs what the same read costs without stagio, and no more requests.
  Status ReadSpan(uint64_t file_id, uint64_t offset, uint64_t length, char* out);
  // Reads the whole blocks [first, first + count) of the file that are neither cached nor on
  // their way, one storage request (BlockBackend::ReadRange, which may run past a block) per
  // maximal run of consecutive such blocks, and waits for the blocks already on their way. A
  // demand fetch (application thread), counted as Read counts a miss: cache_misses per block
  // fetched, demand_fetches per storage request. A block on its way as a prefetch counts as
  // used after a wait. Fails if a storage read fails: those blocks stay invalid, and the runs
  // after the failed one are not read. Blocks are not pinned afterwards: the caller reads them
  // with Read, which fetches again if they were evicted in between (or if the fetch this call
  // waited for failed). For a file in a shared store it does nothing: the caller's reads fetch.
  Status FetchBlocks(uint64_t file_id, uint64_t first, uint64_t count);
  // The same ahead of use (I/O thread), and without waiting: skipped entirely if `epoch` is no
  // longer the file's invalidation epoch, and no run is read once it stops being. Fetched blocks
  // are prefetched-unused, each counted in prefetch_issued. A block found cached or on its way
  // counts as overtaken by a read (so plan prefetches only for blocks not Contain()ed), unless
  // an earlier prefetch brought it and no read has used it yet: then it is skipped uncounted.
  // Errors are not reported: a read that needs a block fetches it again and reports its own
  // error. Result: kFailed if a storage read failed; kStale if the epoch was stale at the start
  // or went stale before a block landed; kFetched if any block was fetched; kInFlight if none
  // was but some were on their way; kAlreadyCached otherwise.
  PrefetchResult PrefetchBlocks(uint64_t file_id, uint64_t first, uint64_t count,
                                uint64_t epoch);
  // The same for file bytes [offset, offset + length), which may start and end inside blocks:
  // for a pre-execution helper, which knows the exact bytes a read will want. A block counts as
  // there when those of its bytes are cached; partially fetched blocks serve the reads that
  // stay within their valid bytes.
  PrefetchResult PrefetchBytes(uint64_t file_id, uint64_t offset, uint64_t length,
                               uint64_t epoch);
  // PrefetchBlocks of the one block `index`.
  PrefetchResult Prefetch(uint64_t file_id, uint64_t index, uint64_t epoch) {
    return PrefetchBlocks(file_id, index, 1, epoch);
  }
  // The file's invalidation epoch, to be given to Prefetch (0 for an unknown file).
  uint64_t InvalidationEpoch(uint64_t file_id) const;
  // True if every byte of the block is cached or a fetch of it is in flight.
  bool Contains(uint64_t file_id, uint64_t index);
  // The same for the block's bytes [begin, end).
  bool Contains(uint64_t file_id, uint64_t index, uint64_t begin, uint64_t end);
  // A pre-execution helper says a read will use the block soon. If Contains() would say true,
  // the block is kept out of eviction until a read pins it, as an unused prefetched block is
  // (seed 001, section V-A: speculated references keep their cached blocks), and true is
  // returned; false means the block must be fetched. The helper bounds how much it announces
  // (RunAheadBudget), so this cannot fill the cache.
  bool Announce(uint64_t file_id, uint64_t index);
  // The same for bytes [begin, end) of the block: true if they are cached (or on their way).
  bool Announce(uint64_t file_id, uint64_t index, uint64_t begin, uint64_t end);
  // The block size the file was registered with; 0 for an unknown file.
  uint64_t BlockSizeOf(uint64_t file_id) const;
  // Copies `length` bytes from `in` into the block and marks them dirty. Never reads storage.
  // Fails only for an unregistered file: a failed write-back during eviction is recorded by
  // the backend (RecordWriteBackError) and the dirty block is kept.
  Status Write(uint64_t file_id, uint64_t index, uint64_t offset, uint64_t length, const char* in);

  // Forgets file bytes [offset, offset + length), dirty or not: storage is about to get newer
  // bytes for them from outside the cache (the direct path). Waits first for write-backs of
  // the blocks they lie in, which carry copies of them; a fetch on its way keeps nothing of
  // those blocks. Fails only if a shared store broke.
  Status ForgetBytes(uint64_t file_id, uint64_t offset, uint64_t length);
  // Writes back every dirty block of the file; returns the first error (all are attempted).
  Status FlushFile(uint64_t file_id);
  // Drops the file's clean blocks; those that must stay (dirty ones, whose write-back has not
  // succeeded, and blocks in use) forget their clean bytes. Fetches on their way keep nothing.
  void DropCleanBlocks(uint64_t file_id);
  // Drops every block of the file, dirty or not. For close, after a final flush attempt.
  void DiscardFile(uint64_t file_id);
  // Writes back dirty blocks, least recently modified first, until dirty bytes <= target.
  // Returns the first error. Used by the I/O thread.
  Status FlushOldestUntil(uint64_t target_dirty_bytes);
  // Writes back every dirty block of every file.
  Status FlushAll();
  // How many write-back requests a flush (FlushFile, FlushOldestUntil, FlushAll) keeps in
  // flight at once, each on a thread of the flushing call: a parallel file system serves many
  // requests at once, and one after another would leave it idle for all but one request's
  // latency. As many as stagio_prefetch_threads' default, for the same reason.
  static constexpr size_t kWriteBackStreams = 4;

  void SetCapacity(uint64_t capacity_bytes);
  uint64_t capacity() const { return capacity_.load(); }
  // The capacity of the cache that holds the file's blocks: its store's, or this cache's.
  uint64_t CapacityFor(uint64_t file_id);
  // Dirty bytes of this cache, plus each shared store's dirty bytes scaled to this cache's
  // capacity: the water marks are shares, the same for a rank's cache and a node's.
  uint64_t dirty_bytes() const;
  uint64_t charged_bytes() const;
  size_t block_count() const;

 private:
  struct Key {
    uint64_t file_id;
    uint64_t index;
    bool operator==(const Key& other) const {
      return file_id == other.file_id && index == other.index;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<uint64_t>()(key.index ^ (key.file_id * 0x9E3779B97F4A7C15ull));
    }
  };
  struct Block;
  struct Shard;
  struct FileEntry {
    std::shared_ptr<BlockBackend> backend;
    std::shared_ptr<SharedBlockStore> store;  // where the blocks live, if not here
    uint64_t block_size;
    std::atomic<uint64_t> epoch{0};  // renewed by DropCleanBlocks and DiscardFile
    std::atomic<int> users{0};       // prefetches under way (AcquireFile); UnregisterFile waits
  };
  // A prefetch's hold on a registration, released at the end of its scope.
  struct FileUse {
    explicit FileUse(std::shared_ptr<FileEntry> file) : entry(std::move(file)) {}
    ~FileUse() {
      if (entry) entry->users.fetch_sub(1);
    }
    FileUse(const FileUse&) = delete;
    FileUse& operator=(const FileUse&) = delete;
    std::shared_ptr<FileEntry> entry;
  };

  Shard& ShardFor(const Key& key);
  std::shared_ptr<FileEntry> LookupFile(uint64_t file_id) const;
  // LookupFile for a prefetch, counted in the entry's users until the FileUse holding it ends.
  std::shared_ptr<FileEntry> AcquireFile(uint64_t file_id);
  // What DropCleanBlocks and DiscardFile do first: makes the file's earlier prefetch plans stale
  // and, for a file in a shared store, drops the store's clean bytes (never its dirty ones:
  // other ranks may still write). True if that was all there was to do.
  bool RenewEpochAndDropInStore(uint64_t file_id);
  // Removes every block of the file, waiting out fetches, flushes and readers of them.
  void RemoveBlocksOf(uint64_t file_id);
  // Finds the block or creates an empty one (no I/O). Requires the shard lock.
  Block* FindOrCreate(Shard& shard, const Key& key, const std::shared_ptr<FileEntry>& file);
  // Marks the block `loading` for a fetch that begins now, under the file's current epoch.
  // Requires the shard lock.
  void StartLoading(Block* block);
  // Copies `fetched` (storage bytes [begin, end) of the block) into the bytes of that range
  // that are still not valid, and marks the range valid unless the file was invalidated since
  // the fetch began (StartLoading). Requires the shard lock.
  void FillFromStorage(Block* block, uint64_t begin, uint64_t end, const char* fetched);
  // Fetches bytes [begin, end) of the block from storage and fills the bytes that are still
  // not valid when it lands; releases the lock around the I/O. `block->loading` must be set.
  Status FetchLocked(std::unique_lock<std::mutex>& lock, Block* block, uint64_t begin,
                     uint64_t end);
  // A block that a run fetch (FetchBlocks, PrefetchBlocks) pinned in its claim pass: one it
  // marked `loading` to fetch itself, or (demand only) one another thread is fetching.
  struct Claim {
    Block* block;
    bool fetch;
    uint64_t begin = 0;  // the bytes of the block to fetch: [begin, end), end 0 = block end
    uint64_t end = 0;
  };
  // Calls visit(block) for each block [first, first + count) of the file, found or created,
  // under its shard's lock, one lock at a time.
  template <typename Visit>
  void VisitRange(const std::shared_ptr<FileEntry>& file, uint64_t file_id, uint64_t first,
                  uint64_t count, Visit visit);
  // PrefetchBlocks and PrefetchBytes of a file whose blocks live in a shared store.
  PrefetchResult PrefetchInStore(FileEntry& file, uint64_t offset, uint64_t length,
                                 uint64_t epoch);
  // PrefetchBlocks and PrefetchBytes, once the file is known and its epoch checked.
  PrefetchResult PrefetchRange(const std::shared_ptr<FileEntry>& file, uint64_t file_id,
                               uint64_t offset, uint64_t length, uint64_t epoch);
  // Reads each maximal run of consecutive `fetch` claims (consecutive file bytes) with one
  // storage request, no lock
  // held, then lands each block of the run under its shard's lock: fills the bytes still
  // invalid if the read succeeded, clears `loading`, notifies, and calls
  // land(shard, lock, block, filled). Once a read fails or `stop()` says so, the remaining
  // runs are landed unfilled without reading. With `demand`, each request counts as a demand
  // fetch. Returns the first error.
  template <typename Stop, typename Land>
  Status FetchRuns(BlockBackend* backend, const std::vector<Claim>& claims, bool demand,
                   Stop stop, Land land);
  // Finds or creates the block, pins it for a read, and waits until no fetch of it is in
  // flight; *waited_for_prefetch says whether that fetch was a prefetch.
  Block* PinSettled(Shard& shard, std::unique_lock<std::mutex>& lock, const Key& key,
                    const std::shared_ptr<FileEntry>& file, bool* waited_for_prefetch);
  // Ends a read's use of a block: evicts what capacity requires and unpins the block.
  void UnpinAfterRead(Shard& shard, std::unique_lock<std::mutex>& lock, Block* block);
  // A demand read found a block that was prefetched and not used yet.
  void RecordPrefetchUse(Block* block, bool waited);
  // A block leaves the cache (evicted, dropped or discarded) before its prefetch was used.
  void RecordPrefetchLoss(Block* block, bool evicted);
  Block* PickVictim(Shard& shard, const std::vector<Block*>& skip, bool allow_unused_prefetch);
  void Touch(Shard& shard, Block* block);
  void MarkDirty(Block* block, uint64_t begin, uint64_t end);
  // Writes back the block's dirty ranges; releases the lock around the I/O.
  Status FlushLocked(Shard& shard, std::unique_lock<std::mutex>& lock, Block* block);
  void RemoveLocked(Shard& shard, Block* block, bool count_as_eviction);
  Status EvictIfNeeded(Shard& shard, std::unique_lock<std::mutex>& lock);
  // Flushes the listed blocks, starting them in order, kWriteBackStreams at once; returns
  // the first error. Stops starting new ones when stop(bytes on their way) says so.
  template <typename Stop>
  Status FlushKeys(const std::vector<Key>& keys, Stop stop);
  std::vector<Key> DirtyKeys(uint64_t file_id_or_all, bool all_files) const;
  // Calls visit(FileEntry&) for each registered file that keeps its blocks in a shared store,
  // holding it as a prefetch does (AcquireFile), so that UnregisterFile waits for the visit
  // and the store's memory is never freed under it.
  template <typename Visit>
  void ForEachFileInStore(Visit visit) const;

  std::atomic<uint64_t> capacity_;
  std::atomic<uint64_t> dirty_bytes_{0};
  std::atomic<uint64_t> modification_clock_{0};
  // Epochs are unique across files and registrations, so a prefetch planned for a file that
  // was unregistered and registered again (a new block size) can never pass for current.
  std::atomic<uint64_t> last_epoch_{0};
  std::vector<std::unique_ptr<Shard>> shards_;
  mutable std::mutex files_mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<FileEntry>> files_;
};

}  // namespace stagio
