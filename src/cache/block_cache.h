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
// Capacity is a target: pinned blocks (in use by a caller) and dirty blocks whose write-back
// failed are never dropped, so the cache may exceed it rather than lose data. When a shard is
// over capacity, clean blocks are evicted from the LRU end; if only dirty ones are left, the
// caller writes the least recently used one back and evicts it.
//
// Threading: all methods are thread-safe. The application thread reads and writes; the I/O
// thread writes back (FlushOldestUntil).
#pragma once

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

// Where the cache reads missing blocks from and writes dirty bytes to: one per open file.
class BlockBackend {
 public:
  virtual ~BlockBackend() = default;
  // Reads block `index` ([index * block_size, +length)) into `buffer`; *bytes_read < length
  // means end of file.
  virtual Status ReadBlock(uint64_t index, char* buffer, uint64_t length, uint64_t* bytes_read) = 0;
  // Writes `length` bytes at `offset_in_block` of block `index`. Called for dirty ranges only.
  virtual Status WriteRange(uint64_t index, uint64_t offset_in_block, const char* data,
                            uint64_t length) = 0;
  // Called when a background write-back of this file fails, so that the error can be reported
  // at the file's next sync or close.
  virtual void RecordWriteBackError(const Status& status) = 0;
  virtual FileStats* stats() = 0;
};

class BlockCache {
 public:
  BlockCache(uint64_t capacity_bytes, uint64_t typical_block_size);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // Files must be registered before their blocks are touched, and unregistered only after
  // DiscardFile. The backend must stay alive until UnregisterFile returns.
  void RegisterFile(uint64_t file_id, std::shared_ptr<BlockBackend> backend, uint64_t block_size);
  void UnregisterFile(uint64_t file_id);

  // Copies bytes [offset, offset + length) of block `index` of the file into `out`, fetching the
  // block from the backend on a miss. Bytes past the end of the storage file read as zeros
  // (the caller clips reads at the file size it knows). Fails only if the fetch fails.
  Status Read(uint64_t file_id, uint64_t index, uint64_t offset, uint64_t length, char* out);
  // Copies `length` bytes from `in` into the block and marks them dirty. Never reads storage.
  // Fails only for an unregistered file: a failed write-back during eviction is recorded by
  // the backend (RecordWriteBackError) and the dirty block is kept.
  Status Write(uint64_t file_id, uint64_t index, uint64_t offset, uint64_t length, const char* in);

  // Writes back every dirty block of the file; returns the first error (all are attempted).
  Status FlushFile(uint64_t file_id);
  // Drops the file's clean blocks (dirty ones stay: their write-back has not succeeded).
  void DropCleanBlocks(uint64_t file_id);
  // Drops every block of the file, dirty or not. For close, after a final flush attempt.
  void DiscardFile(uint64_t file_id);
  // Writes back dirty blocks, least recently modified first, until dirty bytes <= target.
  // Returns the first error. Used by the I/O thread.
  Status FlushOldestUntil(uint64_t target_dirty_bytes);
  // Writes back every dirty block of every file.
  Status FlushAll();

  void SetCapacity(uint64_t capacity_bytes);
  uint64_t capacity() const { return capacity_.load(); }
  uint64_t dirty_bytes() const { return dirty_bytes_.load(); }
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
    uint64_t block_size;
  };

  Shard& ShardFor(const Key& key);
  std::shared_ptr<FileEntry> LookupFile(uint64_t file_id) const;
  // Finds the block or creates an empty one (no I/O). Requires the shard lock.
  Block* FindOrCreate(Shard& shard, const Key& key, const std::shared_ptr<FileEntry>& file);
  void Touch(Shard& shard, Block* block);
  void MarkDirty(Block* block, uint64_t begin, uint64_t end);
  // Writes back the block's dirty ranges; releases the lock around the I/O.
  Status FlushLocked(Shard& shard, std::unique_lock<std::mutex>& lock, Block* block);
  void RemoveLocked(Shard& shard, Block* block, bool count_as_eviction);
  Status EvictIfNeeded(Shard& shard, std::unique_lock<std::mutex>& lock);
  // Flushes the listed blocks in order, returning the first error; stops early when `stop`
  // says so.
  template <typename Stop>
  Status FlushKeys(const std::vector<Key>& keys, Stop stop);
  std::vector<Key> DirtyKeys(uint64_t file_id_or_all, bool all_files) const;

  std::atomic<uint64_t> capacity_;
  std::atomic<uint64_t> dirty_bytes_{0};
  std::atomic<uint64_t> modification_clock_{0};
  std::vector<std::unique_ptr<Shard>> shards_;
  mutable std::mutex files_mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<FileEntry>> files_;
};

}  // namespace stagio
