// SharedBlockStore: where a file's blocks live when this process does not keep them itself:
// the node cache, one block table in memory shared by the ranks of a node (src/node/).
//
// BlockCache hands every call for a file registered with a store to that store, so the engine,
// the I/O thread, the prefetchers and the pre-execution helpers use one cache interface
// whichever cache holds a file. A store reaches storage through the calling process's own
// backend (its own open of the file), which also takes its stats and prefetch outcomes.
// Its calls follow BlockCache's of the same name (block_cache.h).
#pragma once

#include <cstdint>

#include "cache/block_cache.h"
#include "common/status.h"

namespace stagio {

class SharedBlockStore {
 public:
  virtual ~SharedBlockStore() = default;

  virtual Status Read(BlockBackend& storage, uint64_t index, uint64_t offset, uint64_t length,
                      char* out, FetchScope scope) = 0;
  // File bytes [offset, offset + length), which may cross blocks: the missing bytes are read
  // with one storage request.
  virtual Status ReadSpan(BlockBackend& storage, uint64_t offset, uint64_t length,
                          char* out) = 0;
  virtual Status Write(BlockBackend& storage, uint64_t index, uint64_t offset, uint64_t length,
                       const char* in) = 0;
  // Fetches bytes [begin, end) of the block ahead of use, unless they are there or on their
  // way, or `epoch` is no longer the store's.
  virtual PrefetchResult Prefetch(BlockBackend& storage, uint64_t index, uint64_t begin,
                                  uint64_t end, uint64_t epoch) = 0;
  // True if bytes [begin, end) of the block are cached or on their way; they are then kept
  // as recently used.
  virtual bool Contains(uint64_t index, uint64_t begin, uint64_t end) = 0;
  virtual uint64_t epoch() const = 0;

  // Bytes [offset, offset + length) of the block, dirty or not (BlockCache::ForgetBytes).
  virtual Status Forget(BlockBackend& storage, uint64_t index, uint64_t offset,
                        uint64_t length) = 0;
  virtual Status FlushAll(BlockBackend& storage) = 0;
  virtual Status FlushOldestUntil(BlockBackend& storage, uint64_t target_dirty_bytes) = 0;
  // Forgets clean bytes and renews the epoch. Dirty bytes stay: other ranks may still be
  // writing, so nothing a rank does alone may drop them.
  virtual void DropClean(BlockBackend& storage) = 0;

  virtual uint64_t dirty_bytes() const = 0;
  virtual uint64_t capacity_bytes() const = 0;
};

}  // namespace stagio
