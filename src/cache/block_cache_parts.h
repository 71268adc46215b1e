// What BlockCache's two source files share: a cached block, a shard, and the one storage
// read both make. block_cache.cc works on single blocks; block_cache_runs.cc on runs of them.
#pragma once

#include <condition_variable>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cache/block_cache.h"
#include "cache/dirty_range_map.h"

namespace stagio {

struct BlockCache::Block {
  Key key;
  uint64_t size;                   // the file's block size; the block's charge
  std::unique_ptr<char[]> data;
  std::shared_ptr<FileEntry> file; // keeps the backend alive while the block exists
  DirtyRangeMap valid;
  DirtyRangeMap dirty;
  uint64_t modified_at = 0;        // modification clock at the last write, for LRM order
  uint64_t generation = 0;         // bumped by every write; a flush compares it
  int pins = 0;
  bool loading = false;
  // The file's invalidation epoch when the fetch under way began: a fetch that began before
  // the file was last invalidated may have read bytes that changed since, so its bytes serve
  // the read that made it and are not kept (FillFromStorage). kStaleLoad: bytes of the block
  // were forgotten while it was on its way (ForgetBytes).
  static constexpr uint64_t kStaleLoad = UINT64_MAX;
  uint64_t load_epoch = 0;
  bool flushing = false;
  DirtyRangeMap rewritten;         // bytes written while the flush under way was on its way
  bool prefetched_unused = false;  // filled (or being filled) by Prefetch, not read yet
  bool announced = false;          // a pre-execution helper said a read will use it (Announce)
  std::list<Block*>::iterator lru_position;
};

struct BlockCache::Shard {
  std::mutex mutex;
  std::condition_variable changed;  // a block stopped loading or flushing
  std::unordered_map<Key, std::unique_ptr<Block>, KeyHash> blocks;
  std::list<Block*> lru;            // front: most recently used
  uint64_t charged = 0;
  uint64_t capacity = 0;
};

namespace block_cache_parts {
// One storage request for `length` bytes at `offset_in_block` of block `index` (running on
// into later blocks if longer), counted in the file's stats. Past the end of the file is a
// hole: zeros, as a read of a sparse file gives.
inline Status ReadFromStorage(BlockBackend* backend, uint64_t index, uint64_t offset_in_block,
                       uint64_t length, char* buffer) {
  uint64_t bytes_read = 0;
  Status status = backend->ReadRange(index, offset_in_block, length, buffer, &bytes_read);
  if (!status.ok()) return status;
  backend->stats()->Add(Counter::storage_reads, 1);
  backend->stats()->Add(Counter::storage_read_bytes, bytes_read);
  std::memset(buffer + bytes_read, 0, length - bytes_read);
  return status;
}

}  // namespace block_cache_parts

}  // namespace stagio
