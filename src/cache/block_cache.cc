// BlockCache, one block at a time: registration, reads and writes of a block, eviction,
// write-back, dropping. Runs of blocks (span reads, run fetches, prefetches) are in
// block_cache_runs.cc; what both share is in block_cache_parts.h.
#include "cache/block_cache.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "cache/block_cache_parts.h"
#include "cache/block_map.h"
#include "cache/shared_block_store.h"
#include "common/parallel.h"

namespace stagio {

using block_cache_parts::ReadFromStorage;

namespace {

// Few shards for small caches, so that one shard can still hold a useful number of blocks.
size_t ShardCountFor(uint64_t capacity, uint64_t block_size) {
  const uint64_t blocks = block_size ? capacity / block_size : 0;
  return static_cast<size_t>(std::clamp<uint64_t>(blocks / 16, 1, 8));
}

}  // namespace

BlockCache::BlockCache(uint64_t capacity_bytes, uint64_t typical_block_size)
    : capacity_(capacity_bytes) {
  const size_t count = ShardCountFor(capacity_bytes, typical_block_size);
  for (size_t i = 0; i < count; ++i) shards_.push_back(std::make_unique<Shard>());
  SetCapacity(capacity_bytes);
}

BlockCache::~BlockCache() = default;

void BlockCache::SetCapacity(uint64_t capacity_bytes) {
  capacity_.store(capacity_bytes);
  for (auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    shard->capacity = capacity_bytes / shards_.size();
  }
}

void BlockCache::RegisterFile(uint64_t file_id, std::shared_ptr<BlockBackend> backend,
                              uint64_t block_size, std::shared_ptr<SharedBlockStore> store) {
  auto entry = std::make_shared<FileEntry>();
  entry->backend = std::move(backend);
  entry->store = std::move(store);
  entry->block_size = block_size;
  entry->epoch = ++last_epoch_;
  std::lock_guard<std::mutex> lock(files_mutex_);
  files_[file_id] = std::move(entry);
}

void BlockCache::UnregisterFile(uint64_t file_id) {
  std::shared_ptr<FileEntry> file;
  {
    std::lock_guard<std::mutex> lock(files_mutex_);
    auto it = files_.find(file_id);
    if (it == files_.end()) return;
    file = std::move(it->second);
    files_.erase(it);
  }
  // Prefetches of this registration still under way (a pre-execution helper's or the I/O
  // thread's) must not leave blocks behind: a registration with another block size would find
  // them under the same keys. Make them stale, wait for them, then remove what they left.
  file->epoch = ++last_epoch_;
  while (file->users.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  RemoveBlocksOf(file_id);
}

std::shared_ptr<BlockCache::FileEntry> BlockCache::AcquireFile(uint64_t file_id) {
  std::lock_guard<std::mutex> lock(files_mutex_);
  auto it = files_.find(file_id);
  if (it == files_.end()) return nullptr;
  it->second->users.fetch_add(1);
  return it->second;
}

std::shared_ptr<BlockCache::FileEntry> BlockCache::LookupFile(uint64_t file_id) const {
  std::lock_guard<std::mutex> lock(files_mutex_);
  auto it = files_.find(file_id);
  return it == files_.end() ? nullptr : it->second;
}

template <typename Visit>
void BlockCache::ForEachFileInStore(Visit visit) const {
  std::vector<std::shared_ptr<FileEntry>> in_stores;
  {
    std::lock_guard<std::mutex> lock(files_mutex_);
    for (const auto& [id, file] : files_) {
      if (!file->store) continue;
      file->users.fetch_add(1);
      in_stores.push_back(file);
    }
  }
  for (const auto& file : in_stores) {
    FileUse use(file);
    visit(*file);
  }
}

BlockCache::Shard& BlockCache::ShardFor(const Key& key) {
  // Consecutive blocks of a file go round-robin over the shards, so a sequential stream
  // spreads evenly instead of filling one shard.
  return *shards_[(key.index + key.file_id * 7919) % shards_.size()];
}

BlockCache::Block* BlockCache::FindOrCreate(Shard& shard, const Key& key,
                                            const std::shared_ptr<FileEntry>& file) {
  auto it = shard.blocks.find(key);
  if (it != shard.blocks.end()) return it->second.get();
  auto block = std::make_unique<Block>();
  block->key = key;
  block->size = file->block_size;
  block->data.reset(new char[file->block_size]);
  block->file = file;
  shard.lru.push_front(block.get());
  block->lru_position = shard.lru.begin();
  shard.charged += block->size;
  Block* raw = block.get();
  shard.blocks.emplace(key, std::move(block));
  return raw;
}

void BlockCache::Touch(Shard& shard, Block* block) {
  shard.lru.splice(shard.lru.begin(), shard.lru, block->lru_position);
}

void BlockCache::MarkDirty(Block* block, uint64_t begin, uint64_t end) {
  if (begin >= end) return;  // an empty range dirties nothing, so it must not count
  if (block->dirty.empty()) dirty_bytes_.fetch_add(block->size);
  block->dirty.Add(begin, end);
  block->valid.Add(begin, end);
  block->modified_at = ++modification_clock_;
  ++block->generation;
  if (block->flushing) block->rewritten.Add(begin, end);
}

void BlockCache::RecordPrefetchUse(Block* block, bool waited) {
  block->prefetched_unused = false;
  BlockBackend* backend = block->file->backend.get();
  backend->stats()->Add(Counter::prefetch_used, 1);
  if (waited) backend->stats()->Add(Counter::prefetch_late, 1);
  backend->OnPrefetchOutcome(waited ? PrefetchOutcome::kUsedAfterWait
                                    : PrefetchOutcome::kUsedInTime);
}

void BlockCache::RecordPrefetchLoss(Block* block, bool evicted) {
  if (!block->prefetched_unused) return;
  block->prefetched_unused = false;
  BlockBackend* backend = block->file->backend.get();
  backend->stats()->Add(Counter::prefetch_wasted, 1);
  // Only eviction says the prefetch ran too far ahead; a sync or close that drops the block
  // says nothing about the depth.
  if (evicted) backend->OnPrefetchOutcome(PrefetchOutcome::kWasted);
}

void BlockCache::RemoveLocked(Shard& shard, Block* block, bool count_as_eviction) {
  if (!block->dirty.empty()) dirty_bytes_.fetch_sub(block->size);
  if (count_as_eviction) block->file->backend->stats()->Add(Counter::cache_evictions, 1);
  RecordPrefetchLoss(block, count_as_eviction);
  shard.lru.erase(block->lru_position);
  shard.charged -= block->size;
  shard.blocks.erase(block->key);
}

void BlockCache::StartLoading(Block* block) {
  block->loading = true;
  block->load_epoch = block->file->epoch.load();
}

void BlockCache::FillFromStorage(Block* block, uint64_t begin, uint64_t end,
                                 const char* fetched) {
  // Only the gaps: bytes written while the fetch was in flight are newer than storage.
  for (const auto& [gap_begin, gap_end] : block->valid.Gaps(begin, end)) {
    std::memcpy(block->data.get() + gap_begin, fetched + (gap_begin - begin),
                gap_end - gap_begin);
  }
  // Invalidated while the fetch was on its way (storage changed under the cache, or another
  // rank's writes became visible): the bytes serve the caller that fetched them, who copies
  // them out under this lock, but no later read.
  if (block->load_epoch == block->file->epoch.load()) block->valid.Add(begin, end);
}

Status BlockCache::FetchLocked(std::unique_lock<std::mutex>& lock, Block* block,
                               uint64_t begin, uint64_t end) {
  lock.unlock();
  std::unique_ptr<char[]> fetched(new char[end - begin]);
  Status status = ReadFromStorage(block->file->backend.get(), block->key.index, begin,
                                  end - begin, fetched.get());
  lock.lock();
  if (status.ok()) FillFromStorage(block, begin, end, fetched.get());
  return status;
}

BlockCache::Block* BlockCache::PinSettled(Shard& shard, std::unique_lock<std::mutex>& lock,
                                          const Key& key, const std::shared_ptr<FileEntry>& file,
                                          bool* waited_for_prefetch) {
  Block* block = FindOrCreate(shard, key, file);
  ++block->pins;
  block->announced = false;  // this is the read it was kept for
  // Another thread may be fetching this block: wait for it rather than read it twice.
  *waited_for_prefetch = block->loading && block->prefetched_unused;
  shard.changed.wait(lock, [block] { return !block->loading; });
  return block;
}

void BlockCache::UnpinAfterRead(Shard& shard, std::unique_lock<std::mutex>& lock, Block* block) {
  // Eviction runs first with the block still pinned: the block a read just used is the most
  // recently used one, and must not go before unused prefetched blocks, which eviction would
  // otherwise protect at its expense. A write-back failure during eviction is recorded by the
  // backend for its file's next sync or close; it is not this read's error.
  EvictIfNeeded(shard, lock);
  --block->pins;
  if (block->valid.empty() && block->pins == 0) {
    // A failed fetch left nothing worth keeping.
    RemoveLocked(shard, block, /*count_as_eviction=*/false);
    return;
  }
  EvictIfNeeded(shard, lock);
}

Status BlockCache::Read(uint64_t file_id, uint64_t index, uint64_t offset, uint64_t length,
                        char* out, FetchScope scope) {
  auto file = LookupFile(file_id);
  if (!file) return Status::InvalidArgument("read of a file the cache does not know");
  if (file->store) return file->store->Read(*file->backend, index, offset, length, out, scope);
  const Key key{file_id, index};
  Shard& shard = ShardFor(key);
  std::unique_lock<std::mutex> lock(shard.mutex);
  bool waited_for_prefetch = false;
  Block* block = PinSettled(shard, lock, key, file, &waited_for_prefetch);
  Status status;
  FileStats* stats = file->backend->stats();
  if (block->valid.Covers(offset, offset + length)) {
    stats->Add(Counter::cache_hits, 1);
    if (block->prefetched_unused) RecordPrefetchUse(block, waited_for_prefetch);
  } else {
    stats->Add(Counter::cache_misses, 1);
    stats->Add(Counter::demand_fetches, 1);
    uint64_t begin = 0;
    uint64_t end = block->size;
    if (scope == FetchScope::kRequestedBytes) {
      // One request spanning the missing bytes asked for.
      const auto gaps = block->valid.Gaps(offset, offset + length);
      begin = gaps.front().first;
      end = gaps.back().second;
    }
    StartLoading(block);
    status = FetchLocked(lock, block, begin, end);
    block->loading = false;
    shard.changed.notify_all();
  }
  if (status.ok()) {
    std::memcpy(out, block->data.get() + offset, length);
    Touch(shard, block);
  }
  UnpinAfterRead(shard, lock, block);
  return status;
}

uint64_t BlockCache::InvalidationEpoch(uint64_t file_id) const {
  auto file = LookupFile(file_id);
  if (!file) return 0;
  // A store's epoch is renewed by every rank's sync; this registration's by re-registering.
  return file->store ? file->store->epoch() : file->epoch.load();
}

uint64_t BlockCache::CapacityFor(uint64_t file_id) {
  auto file = LookupFile(file_id);
  return file && file->store ? file->store->capacity_bytes() : capacity();
}

bool BlockCache::Contains(uint64_t file_id, uint64_t index) {
  return Contains(file_id, index, 0, BlockSizeOf(file_id));
}

bool BlockCache::Contains(uint64_t file_id, uint64_t index, uint64_t begin, uint64_t end) {
  if (auto file = LookupFile(file_id); file && file->store) {
    return file->store->Contains(index, begin, end);
  }
  const Key key{file_id, index};
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.blocks.find(key);
  if (it == shard.blocks.end()) return false;
  const Block& block = *it->second;
  return block.loading || block.valid.Covers(begin, std::min(end, block.size));
}

bool BlockCache::Announce(uint64_t file_id, uint64_t index) {
  return Announce(file_id, index, 0, BlockSizeOf(file_id));
}

bool BlockCache::Announce(uint64_t file_id, uint64_t index, uint64_t begin, uint64_t end) {
  // A store keeps what was just asked about as recently used, which is what an announcement
  // is for.
  if (auto file = LookupFile(file_id); file && file->store) {
    return file->store->Contains(index, begin, end);
  }
  const Key key{file_id, index};
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.blocks.find(key);
  if (it == shard.blocks.end()) return false;
  Block& block = *it->second;
  if (!block.loading && !block.valid.Covers(begin, end)) return false;
  block.announced = true;
  return true;
}

uint64_t BlockCache::BlockSizeOf(uint64_t file_id) const {
  auto file = LookupFile(file_id);
  return file ? file->block_size : 0;
}

Status BlockCache::Write(uint64_t file_id, uint64_t index, uint64_t offset, uint64_t length,
                         const char* in) {
  auto file = LookupFile(file_id);
  if (!file) return Status::InvalidArgument("write to a file the cache does not know");
  if (file->store) return file->store->Write(*file->backend, index, offset, length, in);
  const Key key{file_id, index};
  Shard& shard = ShardFor(key);
  std::unique_lock<std::mutex> lock(shard.mutex);
  Block* block = FindOrCreate(shard, key, file);
  std::memcpy(block->data.get() + offset, in, length);
  MarkDirty(block, offset, offset + length);
  Touch(shard, block);
  // Evicting must not drop the block just written before its bytes are safe, so the writer
  // pins it across eviction; if it alone is over capacity, it is written back in line.
  ++block->pins;
  EvictIfNeeded(shard, lock);
  --block->pins;
  EvictIfNeeded(shard, lock);
  // The bytes are in the cache, which is all a write promises. A write-back failure during
  // eviction is recorded by the backend and reported at the file's next sync or close.
  return Status::OK();
}

Status BlockCache::EvictIfNeeded(Shard& shard, std::unique_lock<std::mutex>& lock) {
  Status first_error;
  // Blocks whose write-back failed in this call are skipped, or one bad file would spin here.
  std::vector<Block*> failed;
  while (shard.charged > shard.capacity) {
    // Prefetched blocks not read yet are the future; used ones are the past, so they go first.
    Block* victim = PickVictim(shard, failed, /*allow_unused_prefetch=*/false);
    if (!victim) victim = PickVictim(shard, failed, /*allow_unused_prefetch=*/true);
    if (!victim) break;
    if (!victim->dirty.empty()) {
      Status status = FlushLocked(shard, lock, victim);
      if (!status.ok()) {
        failed.push_back(victim);
        if (first_error.ok()) first_error = status;
      }
      continue;  // the lock was released: look again from the LRU end
    }
    RemoveLocked(shard, victim, /*count_as_eviction=*/true);
  }
  return first_error;
}

BlockCache::Block* BlockCache::PickVictim(Shard& shard, const std::vector<Block*>& skip,
                                          bool allow_unused_prefetch) {
  for (auto it = shard.lru.rbegin(); it != shard.lru.rend(); ++it) {
    Block* candidate = *it;
    if (candidate->pins > 0 || candidate->loading || candidate->flushing) continue;
    if ((candidate->prefetched_unused || candidate->announced) && !allow_unused_prefetch) {
      continue;
    }
    if (std::find(skip.begin(), skip.end(), candidate) != skip.end()) continue;
    return candidate;
  }
  return nullptr;
}

Status BlockCache::FlushLocked(Shard& shard, std::unique_lock<std::mutex>& lock, Block* block) {
  ++block->pins;
  shard.changed.wait(lock, [block] { return !block->flushing; });
  if (block->dirty.empty()) {
    --block->pins;
    shard.changed.notify_all();
    return Status::OK();
  }
  struct Piece {
    uint64_t offset;
    std::vector<char> bytes;
  };
  std::vector<Piece> pieces;
  for (const auto& [begin, end] : block->dirty.Ranges()) {
    pieces.push_back({begin, std::vector<char>(block->data.get() + begin, block->data.get() + end)});
  }
  const uint64_t generation = block->generation;
  block->flushing = true;
  block->rewritten.Clear();
  BlockBackend* backend = block->file->backend.get();
  lock.unlock();

  Status status;
  uint64_t flushed = 0;
  for (const Piece& piece : pieces) {
    status = backend->WriteRange(block->key.index, piece.offset, piece.bytes.data(),
                                 piece.bytes.size());
    if (!status.ok()) break;
    flushed += piece.bytes.size();
    backend->stats()->Add(Counter::storage_writes, 1);
  }
  backend->stats()->Add(Counter::dirty_bytes_flushed, flushed);
  if (!status.ok()) {
    backend->stats()->Add(Counter::write_back_errors, 1);
    backend->RecordWriteBackError(status);
  }

  lock.lock();
  block->flushing = false;
  // Written again meanwhile: those bytes are newer than what went out, so they stay dirty,
  // and only they (a block written in chunks while its first chunks go out would otherwise
  // write every chunk again with each later one).
  if (status.ok()) {
    if (block->generation != generation) {
      for (const Piece& piece : pieces) {
        block->dirty.Subtract(piece.offset, piece.offset + piece.bytes.size());
      }
      for (const auto& [begin, end] : block->rewritten.Ranges()) block->dirty.Add(begin, end);
    } else {
      block->dirty.Clear();
    }
    if (block->dirty.empty()) dirty_bytes_.fetch_sub(block->size);
  }
  --block->pins;
  shard.changed.notify_all();
  return status;
}

std::vector<BlockCache::Key> BlockCache::DirtyKeys(uint64_t file_id, bool all_files) const {
  std::vector<std::pair<uint64_t, Key>> aged;  // (modified_at, key)
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    for (const auto& [key, block] : shard->blocks) {
      if (block->dirty.empty() || (!all_files && key.file_id != file_id)) continue;
      aged.emplace_back(block->modified_at, key);
    }
  }
  std::sort(aged.begin(), aged.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Key> keys;
  keys.reserve(aged.size());
  for (const auto& entry : aged) keys.push_back(entry.second);
  return keys;
}

template <typename Stop>
Status BlockCache::FlushKeys(const std::vector<Key>& keys, Stop stop) {
  // A stream claims its next block, and counts it as on its way, under one lock, so that the
  // streams together start what `stop` allows and not a block more.
  std::mutex claim_mutex;
  size_t next = 0;
  // Dirty bytes (as dirty_bytes_ charges them) whose write-back has started and not ended.
  std::atomic<uint64_t> in_flight{0};
  std::mutex error_mutex;
  Status first_error;
  RunOnThreads(std::min(kWriteBackStreams, keys.size()), [&](size_t /*stream*/) {
    while (true) {
      std::unique_lock<std::mutex> claim(claim_mutex);
      if (next == keys.size() || stop(in_flight.load())) break;
      const Key& key = keys[next++];
      Shard& shard = ShardFor(key);
      std::unique_lock<std::mutex> lock(shard.mutex);
      auto it = shard.blocks.find(key);
      if (it == shard.blocks.end()) continue;
      Block* block = it->second.get();
      const uint64_t charge = block->dirty.empty() ? 0 : block->size;
      in_flight += charge;
      claim.unlock();
      Status status = FlushLocked(shard, lock, block);
      in_flight -= charge;
      lock.unlock();
      std::lock_guard<std::mutex> error_lock(error_mutex);
      if (!status.ok() && first_error.ok()) first_error = std::move(status);
    }
  });
  return first_error;
}

Status BlockCache::ForgetBytes(uint64_t file_id, uint64_t offset, uint64_t length) {
  auto file = LookupFile(file_id);
  if (!file) return Status::OK();
  const BlockMap map(file->block_size);
  Status status;
  map.ForEachPiece(offset, length, [&](const BlockPiece& piece) {
    if (file->store) {
      status = file->store->Forget(*file->backend, piece.index, piece.offset_in_block,
                                   piece.length);
      return status.ok();
    }
    const Key key{file_id, piece.index};
    Shard& shard = ShardFor(key);
    std::unique_lock<std::mutex> lock(shard.mutex);
    // A write-back on its way carries a copy of these bytes: it must land before the new ones.
    Block* block = nullptr;
    shard.changed.wait(lock, [&] {
      auto it = shard.blocks.find(key);
      block = it == shard.blocks.end() ? nullptr : it->second.get();
      return block == nullptr || !block->flushing;
    });
    if (block == nullptr) return true;
    const uint64_t begin = piece.offset_in_block;
    const uint64_t end = begin + piece.length;
    const bool was_dirty = !block->dirty.empty();
    block->dirty.Subtract(begin, end);
    block->valid.Subtract(begin, end);
    if (was_dirty && block->dirty.empty()) dirty_bytes_.fetch_sub(block->size);
    if (block->loading) block->load_epoch = Block::kStaleLoad;
    return true;
  });
  return status;
}

namespace {

// Runs flush(), a write-back of a shared store's blocks that several threads may run at once,
// on up to `streams` threads: no more than the store has dirty blocks, since a thread costs
// more to start than a flush with nothing left to write. Returns the first error.
template <typename Flush>
Status FlushStoreOnStreams(const SharedBlockStore& store, uint64_t block_size, size_t streams,
                           Flush flush) {
  const uint64_t size = std::max<uint64_t>(1, block_size);
  const uint64_t dirty_blocks = (store.dirty_bytes() + size - 1) / size;
  std::mutex error_mutex;
  Status first;
  RunOnThreads(std::max<size_t>(1, std::min<uint64_t>(streams, dirty_blocks)),
               [&](size_t /*stream*/) {
                 Status status = flush();
                 std::lock_guard<std::mutex> lock(error_mutex);
                 if (first.ok()) first = std::move(status);
               });
  return first;
}

}  // namespace

Status BlockCache::FlushFile(uint64_t file_id) {
  if (auto file = LookupFile(file_id); file && file->store) {
    return FlushStoreOnStreams(*file->store, file->block_size, kWriteBackStreams,
                               [&] { return file->store->FlushAll(*file->backend); });
  }
  return FlushKeys(DirtyKeys(file_id, false), [](uint64_t) { return false; });
}

Status BlockCache::FlushAll() {
  Status first = FlushKeys(DirtyKeys(0, true), [](uint64_t) { return false; });
  ForEachFileInStore([&](FileEntry& file) {
    const Status status =
        FlushStoreOnStreams(*file.store, file.block_size, kWriteBackStreams,
                            [&] { return file.store->FlushAll(*file.backend); });
    if (first.ok()) first = status;
  });
  return first;
}

Status BlockCache::FlushOldestUntil(uint64_t target_dirty_bytes) {
  // Write-backs already on their way count as done: the streams together stop at the target.
  Status first = FlushKeys(DirtyKeys(0, true), [this, target_dirty_bytes](uint64_t in_flight) {
    return dirty_bytes_.load() <= target_dirty_bytes + in_flight;
  });
  // Each store down to the same share of its own capacity. Every rank of the node may do this
  // at once: write-back of the node's blocks is anyone's work.
  const uint64_t capacity = std::max<uint64_t>(1, capacity_.load());
  const double share = static_cast<double>(target_dirty_bytes) / static_cast<double>(capacity);
  ForEachFileInStore([&](FileEntry& file) {
    const auto target =
        static_cast<uint64_t>(share * static_cast<double>(file.store->capacity_bytes()));
    const Status status = FlushStoreOnStreams(
        *file.store, file.block_size, kWriteBackStreams,
        [&] { return file.store->FlushOldestUntil(*file.backend, target); });
    if (first.ok()) first = status;
  });
  return first;
}

uint64_t BlockCache::dirty_bytes() const {
  uint64_t dirty = dirty_bytes_.load();
  const double capacity = static_cast<double>(capacity_.load());
  ForEachFileInStore([&](FileEntry& file) {
    const double share = static_cast<double>(file.store->dirty_bytes()) /
                         static_cast<double>(std::max<uint64_t>(1, file.store->capacity_bytes()));
    dirty += static_cast<uint64_t>(share * capacity);
  });
  return dirty;
}

bool BlockCache::RenewEpochAndDropInStore(uint64_t file_id) {
  auto file = LookupFile(file_id);
  if (!file) return false;
  file->epoch = ++last_epoch_;  // earlier plans are stale
  if (!file->store) return false;
  file->store->DropClean(*file->backend);
  return true;
}

void BlockCache::DropCleanBlocks(uint64_t file_id) {
  if (RenewEpochAndDropInStore(file_id)) return;
  for (auto& shard : shards_) {
    std::unique_lock<std::mutex> lock(shard->mutex);
    std::vector<Block*> doomed;
    for (const auto& [key, block] : shard->blocks) {
      if (key.file_id != file_id) continue;
      if (block->dirty.empty() && block->pins == 0 && !block->loading && !block->flushing) {
        doomed.push_back(block.get());
      } else {
        // A block that must stay (dirty, or in use) forgets its clean bytes: they may be
        // stale, and a read of them must go to storage. A fetch on its way keeps nothing
        // (the epoch renewed above).
        block->valid = block->dirty;
      }
    }
    for (Block* block : doomed) RemoveLocked(*shard, block, /*count_as_eviction=*/false);
  }
}

void BlockCache::DiscardFile(uint64_t file_id) {
  if (RenewEpochAndDropInStore(file_id)) return;
  RemoveBlocksOf(file_id);
}

void BlockCache::RemoveBlocksOf(uint64_t file_id) {
  for (auto& shard : shards_) {
    std::unique_lock<std::mutex> lock(shard->mutex);
    // Wait out fetches, flushes and readers of this file's blocks; the caller starts no more.
    shard->changed.wait(lock, [&] {
      for (const auto& [key, block] : shard->blocks) {
        if (key.file_id == file_id && (block->loading || block->flushing || block->pins > 0)) {
          return false;
        }
      }
      return true;
    });
    std::vector<Block*> doomed;
    for (const auto& [key, block] : shard->blocks) {
      if (key.file_id == file_id) doomed.push_back(block.get());
    }
    for (Block* block : doomed) RemoveLocked(*shard, block, /*count_as_eviction=*/false);
  }
}

uint64_t BlockCache::charged_bytes() const {
  uint64_t total = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    total += shard->charged;
  }
  return total;
}

size_t BlockCache::block_count() const {
  size_t total = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    total += shard->blocks.size();
  }
  return total;
}

}  // namespace stagio
