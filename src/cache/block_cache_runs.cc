// BlockCache, runs of blocks: a span read that fetches every missing byte of several blocks
// with one storage request, run fetches for two-phase reads, and prefetches (of whole blocks
// for the I/O thread, of exact bytes for pre-execution helpers), each run in three passes that
// never hold two shard locks at once (see block_cache.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "cache/block_cache.h"
#include "cache/block_cache_parts.h"
#include "cache/shared_block_store.h"

namespace stagio {

using block_cache_parts::ReadFromStorage;

Status BlockCache::ReadSpan(uint64_t file_id, uint64_t offset, uint64_t length, char* out) {
  auto file = LookupFile(file_id);
  if (!file) return Status::InvalidArgument("read of a file the cache does not know");
  if (file->store) return file->store->ReadSpan(*file->backend, offset, length, out);
  const uint64_t block_size = file->block_size;
  struct Piece {
    Block* block;
    uint64_t begin;  // in the block
    uint64_t end;
    bool fetch;
    uint64_t gaps_begin = 0;  // in the block: the first and last missing byte, when claimed
    uint64_t gaps_end = 0;
  };
  std::vector<Piece> pieces;
  // 1. Pin every block of the span; those with missing bytes are marked loading, so that no
  // other thread fetches them meanwhile (the I/O thread's prefetch skips loading blocks and
  // never waits for one, so holding several cannot deadlock).
  for (uint64_t at = offset; at < offset + length;) {
    const uint64_t index = at / block_size;
    const uint64_t begin = at - index * block_size;
    const uint64_t end = std::min(block_size, begin + (offset + length - at));
    const Key key{file_id, index};
    Shard& shard = ShardFor(key);
    std::unique_lock<std::mutex> lock(shard.mutex);
    bool waited_for_prefetch = false;
    Block* block = PinSettled(shard, lock, key, file, &waited_for_prefetch);
    Piece piece{block, begin, end, !block->valid.Covers(begin, end)};
    if (piece.fetch) {
      StartLoading(block);
      // Under the lock: once it is released, a write may fill the gaps (writes do not wait for
      // a fetch), and the fetch still reads what was missing here; landing skips what is valid.
      const auto gaps = block->valid.Gaps(begin, end);
      piece.gaps_begin = gaps.front().first;
      piece.gaps_end = gaps.back().second;
    } else if (block->prefetched_unused) {
      RecordPrefetchUse(block, waited_for_prefetch);
    }
    pieces.push_back(piece);
    at += end - begin;
  }
  // 2. One storage request from the first to the last missing byte.
  FileStats* stats = file->backend->stats();
  Status status;
  std::unique_ptr<char[]> fetched;
  uint64_t fetch_begin = 0;  // file offsets
  uint64_t fetch_end = 0;
  for (const Piece& piece : pieces) {
    if (!piece.fetch) continue;
    const uint64_t base = piece.block->key.index * block_size;
    if (fetch_end == 0) fetch_begin = base + piece.gaps_begin;
    fetch_end = base + piece.gaps_end;
  }
  if (fetch_end > fetch_begin) {
    stats->Add(Counter::demand_fetches, 1);
    fetched.reset(new char[fetch_end - fetch_begin]);
    status = ReadFromStorage(file->backend.get(), fetch_begin / block_size,
                             fetch_begin % block_size, fetch_end - fetch_begin, fetched.get());
  }
  // 3. Fill the gaps that are still gaps, copy out, unpin.
  for (const Piece& piece : pieces) {
    Block* block = piece.block;
    const uint64_t base = block->key.index * block_size;
    Shard& shard = ShardFor(block->key);
    std::unique_lock<std::mutex> lock(shard.mutex);
    stats->Add(piece.fetch ? Counter::cache_misses : Counter::cache_hits, 1);
    if (piece.fetch) {
      if (status.ok()) {
        const uint64_t lo = std::max(piece.begin, fetch_begin - std::min(fetch_begin, base));
        const uint64_t hi = std::min(piece.end, fetch_end - base);
        FillFromStorage(block, lo, hi, fetched.get() + (base + lo - fetch_begin));
      }
      block->loading = false;
      shard.changed.notify_all();
    }
    if (status.ok()) {
      std::memcpy(out + (base + piece.begin - offset), block->data.get() + piece.begin,
                  piece.end - piece.begin);
      Touch(shard, block);
    }
    UnpinAfterRead(shard, lock, block);
  }
  return status;
}

template <typename Visit>
void BlockCache::VisitRange(const std::shared_ptr<FileEntry>& file, uint64_t file_id,
                            uint64_t first, uint64_t count, Visit visit) {
  for (uint64_t index = first; index < first + count; ++index) {
    const Key key{file_id, index};
    Shard& shard = ShardFor(key);
    std::lock_guard<std::mutex> lock(shard.mutex);
    visit(FindOrCreate(shard, key, file));
  }
}

template <typename Stop, typename Land>
Status BlockCache::FetchRuns(BlockBackend* backend, const std::vector<Claim>& claims,
                             bool demand, Stop stop, Land land) {
  Status first_error;
  for (size_t begin = 0; begin < claims.size();) {
    if (!claims[begin].fetch) {
      ++begin;
      continue;
    }
    // The run: consecutive bytes of the file, all fetched here: consecutive block indices,
    // each claim but the last reaching its block's end, each but the first starting at 0.
    // Blocks of one file share a size.
    const uint64_t block_size = claims[begin].block->size;
    const auto claim_end = [block_size](const Claim& claim) {
      return claim.end ? claim.end : block_size;
    };
    size_t end = begin + 1;
    while (end < claims.size() && claims[end].fetch &&
           claims[end].block->key.index == claims[end - 1].block->key.index + 1 &&
           claim_end(claims[end - 1]) == block_size && claims[end].begin == 0) {
      ++end;
    }
    const uint64_t first_index = claims[begin].block->key.index;
    const uint64_t run_begin = claims[begin].begin;  // in the first block
    const uint64_t length =
        (claims[end - 1].block->key.index - first_index) * block_size +
        claim_end(claims[end - 1]) - run_begin;
    std::unique_ptr<char[]> fetched;
    Status status = first_error;
    if (status.ok() && !stop()) {
      if (demand) backend->stats()->Add(Counter::demand_fetches, 1);
      fetched.reset(new char[length]);
      status = ReadFromStorage(backend, first_index, run_begin, length, fetched.get());
      if (!status.ok()) first_error = status;
    }
    for (size_t i = begin; i < end; ++i) {
      const Claim& claim = claims[i];
      Block* block = claim.block;
      Shard& shard = ShardFor(block->key);
      std::unique_lock<std::mutex> lock(shard.mutex);
      const bool filled = fetched && status.ok();
      if (filled) {
        const uint64_t at = (block->key.index - first_index) * block_size + claim.begin - run_begin;
        FillFromStorage(block, claim.begin, claim_end(claim), fetched.get() + at);
      }
      block->loading = false;
      shard.changed.notify_all();
      land(shard, lock, block, filled);
    }
    begin = end;
  }
  return first_error;
}

Status BlockCache::FetchBlocks(uint64_t file_id, uint64_t first, uint64_t count) {
  auto file = LookupFile(file_id);
  if (!file) return Status::InvalidArgument("fetch of a file the cache does not know");
  // A store keeps none of the bytes a span read brings for blocks the node does not hold, so
  // reading them here would only read them twice: the caller's reads fetch what they miss.
  if (file->store) return Status::OK();
  FileStats* stats = file->backend->stats();
  std::vector<Claim> claims;
  VisitRange(file, file_id, first, count, [&](Block* block) {
    if (!block->loading && block->valid.Covers(0, block->size)) return;  // the caller's Read hits
    ++block->pins;
    claims.push_back({block, /*fetch=*/!block->loading});
    if (!claims.back().fetch) return;  // another thread's: waited for below
    StartLoading(block);
    stats->Add(Counter::cache_misses, 1);
  });
  const Status status = FetchRuns(
      file->backend.get(), claims, /*demand=*/true, [] { return false; },
      [this](Shard& shard, std::unique_lock<std::mutex>& lock, Block* block, bool filled) {
        UnpinAfterRead(shard, lock, block);
      });
  // Only now that none of this call's blocks is loading, so that no other fetch can be waiting
  // for one of them while this one waits for it.
  for (const Claim& claim : claims) {
    if (claim.fetch) continue;
    Block* block = claim.block;
    Shard& shard = ShardFor(block->key);
    std::unique_lock<std::mutex> lock(shard.mutex);
    shard.changed.wait(lock, [block] { return !block->loading; });
    // This demand is the read the prefetch was for, and it came before the block did.
    if (block->prefetched_unused) RecordPrefetchUse(block, /*waited=*/true);
    UnpinAfterRead(shard, lock, block);
  }
  return status;
}

PrefetchResult BlockCache::PrefetchBlocks(uint64_t file_id, uint64_t first, uint64_t count,
                                          uint64_t epoch) {
  FileUse file(AcquireFile(file_id));
  if (!file.entry) return PrefetchResult::kStale;
  const uint64_t block_size = file.entry->block_size;
  // A store checks `epoch` against its own (InvalidationEpoch gave that one).
  if (file.entry->store) {
    return PrefetchInStore(*file.entry, first * block_size, count * block_size, epoch);
  }
  if (file.entry->epoch.load() != epoch) return PrefetchResult::kStale;
  return PrefetchRange(file.entry, file_id, first * block_size, count * block_size, epoch);
}

PrefetchResult BlockCache::PrefetchBytes(uint64_t file_id, uint64_t offset, uint64_t length,
                                         uint64_t epoch) {
  FileUse file(AcquireFile(file_id));
  if (!file.entry) return PrefetchResult::kStale;
  if (file.entry->store) return PrefetchInStore(*file.entry, offset, length, epoch);
  if (file.entry->epoch.load() != epoch) return PrefetchResult::kStale;
  return PrefetchRange(file.entry, file_id, offset, length, epoch);
}

PrefetchResult BlockCache::PrefetchInStore(FileEntry& file, uint64_t offset, uint64_t length,
                                           uint64_t epoch) {
  // One request per block: the store's fetches of different blocks run in parallel on the
  // node's ranks and prefetch workers, and none holds two blocks at once.
  bool fetched = false, in_flight = false;
  for (uint64_t at = offset; at < offset + length;) {
    const uint64_t index = at / file.block_size;
    const uint64_t begin = at - index * file.block_size;
    const uint64_t end = std::min(file.block_size, begin + (offset + length - at));
    at += end - begin;
    switch (file.store->Prefetch(*file.backend, index, begin, end, epoch)) {
      case PrefetchResult::kFetched: fetched = true; break;
      case PrefetchResult::kInFlight: in_flight = true; break;
      case PrefetchResult::kAlreadyCached: break;
      case PrefetchResult::kStale: return PrefetchResult::kStale;
      case PrefetchResult::kFailed: return PrefetchResult::kFailed;
    }
  }
  if (fetched) return PrefetchResult::kFetched;
  return in_flight ? PrefetchResult::kInFlight : PrefetchResult::kAlreadyCached;
}

PrefetchResult BlockCache::PrefetchRange(const std::shared_ptr<FileEntry>& file,
                                         uint64_t file_id, uint64_t offset, uint64_t length,
                                         uint64_t epoch) {
  if (length == 0) return PrefetchResult::kAlreadyCached;
  const uint64_t block_size = file->block_size;
  const uint64_t first = offset / block_size;
  const uint64_t count = (offset + length - 1) / block_size - first + 1;
  BlockBackend* backend = file->backend.get();
  std::vector<Claim> claims;
  bool any_in_flight = false;
  VisitRange(file, file_id, first, count, [&](Block* block) {
    // The bytes of the range in this block.
    const uint64_t base = block->key.index * block_size;
    const uint64_t begin = std::max(offset, base) - base;
    const uint64_t end = std::min(offset + length, base + block_size) - base;
    const bool there = block->loading || block->valid.Covers(begin, end);
    any_in_flight = any_in_flight || block->loading;
    // Another job's prefetch brought it (runs queued earlier may overlap this one): no read
    // has come for it yet, so nothing to count.
    if (there && block->prefetched_unused) return;
    if (there) {
      // Planned for a block that was not cached, so a read got there first (it is fetching the
      // block now, or has).
      backend->stats()->Add(Counter::prefetch_late, 1);
      backend->OnPrefetchOutcome(PrefetchOutcome::kOvertaken);
      return;
    }
    ++block->pins;
    StartLoading(block);
    block->prefetched_unused = true;
    backend->stats()->Add(Counter::prefetch_issued, 1);
    claims.push_back({block, /*fetch=*/true, begin, end == block_size ? 0 : end});
  });
  const auto is_stale = [&file, epoch] { return file->epoch.load() != epoch; };
  bool any_fetched = false;
  bool any_stale = false;
  const Status status = FetchRuns(
      backend, claims, /*demand=*/false, is_stale,
      [&](Shard& shard, std::unique_lock<std::mutex>& lock, Block* block, bool filled) {
        // Invalidated while the fetch was on its way: what it brought may predate the sync, so
        // it must not be used. The bytes were copied in already, so drop the whole block if it
        // holds nothing else; otherwise take back the validity the fetch added.
        const bool stale = is_stale();
        if (stale && filled) {
          block->valid.Clear();
          for (const auto& [begin, end] : block->dirty.Ranges()) block->valid.Add(begin, end);
        }
        if (!filled || stale) block->prefetched_unused = false;
        any_fetched = any_fetched || (filled && !stale);
        any_stale = any_stale || stale;
        --block->pins;
        if (block->valid.empty() && block->pins == 0) {
          RemoveLocked(shard, block, /*count_as_eviction=*/false);
        } else {
          EvictIfNeeded(shard, lock);
        }
      });
  if (!status.ok()) return PrefetchResult::kFailed;
  if (any_stale) return PrefetchResult::kStale;
  if (any_fetched) return PrefetchResult::kFetched;
  return any_in_flight ? PrefetchResult::kInFlight : PrefetchResult::kAlreadyCached;
}

}  // namespace stagio
