#include "node/node_block_table.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <vector>

#include "node/byte_ranges.h"
#include "node/frame_fetches.h"
#include "node/shared_lock.h"

namespace stagio {

namespace {

constexpr uint64_t kMagic = 0x324e6f6967617473ull;  // "stagioN2"
constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kMaxShards = 16;
// How long a waiter sleeps before it looks again whether the process it waits for lives.
constexpr std::chrono::milliseconds kWaitSlice(20);

size_t AlignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

uint64_t Mix(uint64_t index) {
  index ^= index >> 31;
  index *= 0x9E3779B97F4A7C15ull;
  return index ^ (index >> 29);
}

Status BrokenError() {
  return Status::IOError(
      "the node cache is unusable: a process of this node died while it held one of its locks");
}

std::vector<char>& Scratch(uint64_t size) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < size) scratch.resize(size);
  return scratch;
}

// Where each part of a table lies in its memory, and how much memory it needs.
struct Sizes {
  uint32_t shards;
  uint32_t buckets_per_shard;
  size_t shards_offset, frames_offset, buckets_offset, data_offset, total;
};

}  // namespace

struct NodeBlockTable::Header {
  uint64_t magic;
  uint64_t frame_size;
  uint32_t frame_count;
  uint32_t shard_count;
  uint32_t buckets_per_shard;
  std::atomic<uint32_t> broken;
  std::atomic<uint64_t> epoch;
  std::atomic<uint64_t> dirty_bytes;
  std::atomic<uint64_t> modification_clock;
  std::atomic<uint64_t> held_bytes;     // frames whose memory pages are taken (NodeBudget)
  std::atomic<uint64_t> charged_bytes;  // the part charged to the node's budget
  std::atomic<uint32_t> views;          // processes that map the table (AddView)
  uint32_t budgeted;                    // Layout::budgeted
  uint64_t shards_offset, frames_offset, buckets_offset, data_offset;
};

struct NodeBlockTable::Shard {
  SharedMutex mutex;
  SharedCondition settled;  // a fetch or write-back of one of the shard's frames ended
  uint32_t lru_head;        // most recently used
  uint32_t lru_tail;
  uint32_t free_head;       // free frames that hold their pages, chained through lru_next
  uint32_t untouched_head;  // free frames without pages (never filled, or given back)
};

struct NodeBlockTable::Frame {
  uint64_t index;
  uint64_t generation;     // renewed by every write, so a write-back sees writes it missed
  uint64_t last_modified;  // the modification clock at the last write: write-back order
  uint32_t next_in_bucket;
  uint32_t lru_prev;
  uint32_t lru_next;
  uint8_t in_use;
  uint8_t prefetched_unused;  // brought by Prefetch, not read since
  uint8_t charged;            // its pages are charged to the node's budget
  int32_t flusher;            // the process writing it back, 0 if none
  // Bytes written while a write-back was on its way (rewritten_overflow: more ranges than the
  // set holds): they stay dirty when it lands, and only they.
  uint8_t rewritten_overflow;
  FrameFetches fetches;       // the storage reads under way into it
  ByteRanges valid;
  ByteRanges dirty;
  ByteRanges rewritten;
};

namespace {

Sizes SizesOf(const NodeBlockTable::Layout& layout, size_t header_bytes, size_t shard_bytes,
              size_t frame_bytes) {
  Sizes sizes;
  sizes.shards = std::clamp<uint32_t>(layout.frames / 4, 1, kMaxShards);
  const uint32_t per_shard = (layout.frames + sizes.shards - 1) / sizes.shards;
  sizes.buckets_per_shard = 1;
  while (sizes.buckets_per_shard < 2 * per_shard) sizes.buckets_per_shard *= 2;
  size_t at = AlignUp(header_bytes, 64);
  sizes.shards_offset = at;
  at += AlignUp(shard_bytes * sizes.shards, 64);
  sizes.frames_offset = at;
  at += AlignUp(frame_bytes * layout.frames, 64);
  sizes.buckets_offset = at;
  at += sizeof(uint32_t) * sizes.shards * sizes.buckets_per_shard;
  // Frames start on a page, so that a frame of whole pages can give its pages back.
  sizes.data_offset = AlignUp(at, static_cast<size_t>(std::max(4096L, sysconf(_SC_PAGESIZE))));
  at = sizes.data_offset;
  sizes.total = at + static_cast<size_t>(layout.frame_size) * layout.frames;
  return sizes;
}

}  // namespace

// One shard, locked for the object's lifetime (except around storage I/O), with the
// operations on its structures.
class NodeBlockTable::ShardAccess {
 public:
  ShardAccess(Header* header, uint32_t shard)
      : header_(header),
        base_(reinterpret_cast<char*>(header)),
        shard_index_(shard),
        shard_(reinterpret_cast<Shard*>(base_ + header->shards_offset) + shard),
        lock_(shard_->mutex) {
    if (lock_.owner_died()) header_->broken.store(1);
  }

  bool broken() const { return header_->broken.load() != 0; }
  Frame& frame(uint32_t id) { return reinterpret_cast<Frame*>(base_ + header_->frames_offset)[id]; }
  char* data(uint32_t id) {
    return base_ + header_->data_offset + static_cast<size_t>(id) * header_->frame_size;
  }
  uint32_t frame_count() const { return header_->frame_count; }
  // The frames this shard owns: shard, shard + shards, ...
  template <typename Visit>
  void ForEachFrame(Visit visit) {
    for (uint32_t id = shard_index_; id < header_->frame_count; id += header_->shard_count) {
      visit(id);
    }
  }

  uint32_t Find(uint64_t index) {
    for (uint32_t id = bucket(index); id != kNone; id = frame(id).next_in_bucket) {
      if (frame(id).index == index) return id;
    }
    return kNone;
  }

  // A free frame, or one whose clean block is evicted for it. kNone if there is none; then
  // *dirty_victim names a frame that could be evicted once written back (or kNone). A frame
  // without pages is taken only if the node's budget (if any) allows it; a table over its
  // share of a node over budget gives another frame's pages back for each block it evicts.
  uint32_t Allocate(BlockBackend& storage, NodeBudget* budget, uint32_t* dirty_victim) {
    *dirty_victim = kNone;
    if (shard_->free_head != kNone) return Pop(&shard_->free_head);
    bool charged = false;
    if (shard_->untouched_head != kNone && TakePages(budget, &charged)) {
      const uint32_t id = Pop(&shard_->untouched_head);
      frame(id).charged = charged ? 1 : 0;
      return id;
    }
    const uint32_t id = EvictableClean(kNone, dirty_victim);
    if (id == kNone) return kNone;
    storage.stats()->Add(Counter::cache_evictions, 1);
    Unlink(id, storage);
    if (budget != nullptr && budget->ShouldGiveBack(Limit(), header_->held_bytes.load())) {
      GiveBackPages(storage, budget, EvictableClean(id, nullptr));
    }
    return id;
  }

  void Insert(uint32_t id, uint64_t index) {
    Frame& f = frame(id);
    f.index = index;
    f.generation = 0;
    f.last_modified = 0;
    f.in_use = 1;
    f.prefetched_unused = 0;
    f.fetches.Clear();
    f.flusher = 0;
    f.rewritten.Clear();
    f.rewritten_overflow = 0;
    f.valid.Clear();
    f.dirty.Clear();
    f.next_in_bucket = bucket(index);
    bucket(index) = id;
    PushMostRecent(id);
  }

  // Drops the frame's block (dirty bytes included) and returns the frame to the free list.
  void Remove(uint32_t id, BlockBackend& storage) {
    Unlink(id, storage);
    Push(&shard_->free_head, id);
  }

  void Touch(uint32_t id) {
    if (shard_->lru_head == id) return;
    UnlinkLru(id);
    PushMostRecent(id);
  }

  // Adds [begin, end) to the frame's valid bytes; while the set is full, clean ranges are
  // forgotten, smallest first, and if only ranges holding dirty bytes are left, every clean
  // byte. False if even that leaves no room (the bytes are then simply not kept).
  bool MarkValid(Frame& f, uint32_t begin, uint32_t end) {
    while (!f.valid.Add(begin, end)) {
      if (!f.valid.RemoveSmallestApartFrom(f.dirty, begin, end)) {
        ForgetCleanBytes(f);
        return f.valid.Add(begin, end);
      }
      f.fetches.MarkStale();  // as in ForgetCleanBytes
    }
    return true;
  }

  // Keeps only the dirty bytes valid. A fetch under way may have read some of the forgotten
  // bytes from storage before they were written back there, so it must leave nothing behind.
  void ForgetCleanBytes(Frame& f) {
    f.valid = f.dirty;
    f.fetches.MarkStale();
  }
  // Waits until no write-back of the frame is on its way, taking it over from a process that
  // died in one. False if the table broke meanwhile.
  bool WaitOutWriteBack(Frame& f) {
    while (f.flusher != 0) {
      if (!ProcessAlive(f.flusher)) {
        f.flusher = 0;
        break;
      }
      if (!Wait()) return false;
    }
    return true;
  }
  // Bytes [begin, end) are no longer known (storage got newer ones around the table): neither
  // they nor a fetch under way may serve a read.
  void ForgetValidRange(Frame& f, uint32_t begin, uint32_t end) {
    if (!f.valid.Remove(begin, end)) ForgetCleanBytes(f);
    f.fetches.MarkStale();
  }

  // Waits for a fetch or write-back of this shard to end (or a bounded while). False if the
  // table broke meanwhile.
  bool Wait() {
    if (!lock_.Wait(shard_->settled, kWaitSlice)) header_->broken.store(1);
    return !broken();
  }
  void NotifyAll() { shard_->settled.NotifyAll(); }
  void Unlock() { lock_.Unlock(); }
  // False if the table broke while the lock was not held.
  bool Relock() {
    if (!lock_.Relock()) header_->broken.store(1);
    return !broken();
  }

  Header* header() { return header_; }

  // Records a fetch of bytes [begin, end) of the frame by this process (lock held): its slot
  // in the frame's fetches, or FrameFetches::kNoSlot if the frame has as many as it can hold.
  int Claim(uint32_t id, uint32_t begin, uint32_t end) {
    return frame(id).fetches.Start(getpid(), begin, end);
  }
  // Ends this process's fetch in `slot` (lock held) and wakes the processes waiting for it.
  // True if it went stale on its way: it must leave nothing behind.
  bool Release(uint32_t id, int slot) {
    const bool stale = frame(id).fetches.End(slot);
    NotifyAll();
    return stale;
  }
  // Copies `fetched` (storage bytes [span_begin, span_end) of the frame) into the bytes of
  // that range that are still not valid (writes that landed during the fetch are newer than
  // storage) and marks the range valid. False if there was no room to keep it valid.
  bool KeepFetched(uint32_t id, uint32_t span_begin, uint32_t span_end, const char* fetched) {
    Frame& f = frame(id);
    f.valid.ForEachGap(span_begin, span_end, [&](uint32_t gap_begin, uint32_t gap_end) {
      std::memcpy(data(id) + gap_begin, fetched + (gap_begin - span_begin), gap_end - gap_begin);
    });
    return MarkValid(f, span_begin, span_end);
  }

  // Gives bytes [begin, end) of a claimed frame their memory pages now, before the fetch
  // lands, so that the first touch of shared memory (a page fault per page) is not paid while
  // the shard's lock is held. Changes no byte, so it needs no lock; harmless if it fails.
  void PopulatePages(uint32_t id, uint32_t begin, uint32_t end) {
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t first = reinterpret_cast<uintptr_t>(data(id) + begin) / page * page;
    const uintptr_t last = reinterpret_cast<uintptr_t>(data(id) + end);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#endif
  }

 private:
  uint64_t Limit() const { return header_->frame_size * header_->frame_count; }

  uint32_t Pop(uint32_t* head) {
    const uint32_t id = *head;
    *head = frame(id).lru_next;
    return id;
  }
  void Push(uint32_t* head, uint32_t id) {
    frame(id).lru_next = *head;
    *head = id;
  }

  // Charges the budget (if any) for a frame's pages; *charged says whether it did. Without a
  // budget every frame may have them.
  bool TakePages(NodeBudget* budget, bool* charged) {
    const uint64_t bytes = header_->frame_size;
    *charged = budget != nullptr;
    if (budget != nullptr) {
      if (!budget->TryTake(bytes, Limit(), header_->held_bytes.load())) return false;
      header_->charged_bytes.fetch_add(bytes);
    }
    header_->held_bytes.fetch_add(bytes);
    return true;
  }

  // The least recently used frame other than `skip` whose block could be evicted now: no
  // fetch or write-back under way, and no dirty byte. kNone if there is none; then
  // *dirty_victim (if asked for) names the least recently used one that is only dirty.
  uint32_t EvictableClean(uint32_t skip, uint32_t* dirty_victim) {
    for (uint32_t id = shard_->lru_tail; id != kNone; id = frame(id).lru_prev) {
      const Frame& f = frame(id);
      if (id == skip || f.fetches.busy() || f.flusher != 0) continue;
      if (f.dirty.empty()) return id;
      if (dirty_victim != nullptr && *dirty_victim == kNone) *dirty_victim = id;
    }
    return kNone;
  }

  // Evicts the clean block of frame `id` (if any) and returns the frame's memory to the system
  // (MADV_REMOVE frees a shared mapping's pages for every process that maps it). Only whole
  // pages go; a frame smaller than a page, or whose pages cannot be given back, is only freed
  // and still counts as held.
  void GiveBackPages(BlockBackend& storage, NodeBudget* budget, uint32_t id) {
    if (id == kNone) return;
    storage.stats()->Add(Counter::cache_evictions, 1);
    Unlink(id, storage);
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t first = (reinterpret_cast<uintptr_t>(data(id)) + page - 1) / page * page;
    const uintptr_t last = (reinterpret_cast<uintptr_t>(data(id)) + header_->frame_size) /
                           page * page;
    if (last <= first ||
        madvise(reinterpret_cast<void*>(first), last - first, MADV_REMOVE) != 0) {
      Push(&shard_->free_head, id);
      return;
    }
    Push(&shard_->untouched_head, id);
    header_->held_bytes.fetch_sub(header_->frame_size);
    if (!frame(id).charged) return;
    frame(id).charged = 0;
    header_->charged_bytes.fetch_sub(header_->frame_size);
    budget->Give(header_->frame_size);
  }

  uint32_t& bucket(uint64_t index) {
    uint32_t* buckets = reinterpret_cast<uint32_t*>(base_ + header_->buckets_offset) +
                        static_cast<size_t>(shard_index_) * header_->buckets_per_shard;
    return buckets[(Mix(index) >> 8) & (header_->buckets_per_shard - 1)];
  }

  // Puts a frame that is in no LRU position at the most recently used end.
  void PushMostRecent(uint32_t id) {
    Frame& f = frame(id);
    f.lru_prev = kNone;
    f.lru_next = shard_->lru_head;
    if (shard_->lru_head != kNone) frame(shard_->lru_head).lru_prev = id;
    shard_->lru_head = id;
    if (shard_->lru_tail == kNone) shard_->lru_tail = id;
  }

  void UnlinkLru(uint32_t id) {
    Frame& f = frame(id);
    if (f.lru_prev != kNone) frame(f.lru_prev).lru_next = f.lru_next;
    else shard_->lru_head = f.lru_next;
    if (f.lru_next != kNone) frame(f.lru_next).lru_prev = f.lru_prev;
    else shard_->lru_tail = f.lru_prev;
  }

  void Unlink(uint32_t id, BlockBackend& storage) {
    Frame& f = frame(id);
    for (uint32_t* link = &bucket(f.index); *link != kNone; link = &frame(*link).next_in_bucket) {
      if (*link == id) {
        *link = f.next_in_bucket;
        break;
      }
    }
    UnlinkLru(id);
    if (f.prefetched_unused) {
      storage.stats()->Add(Counter::prefetch_wasted, 1);
      storage.OnPrefetchOutcome(PrefetchOutcome::kWasted);
    }
    header_->dirty_bytes.fetch_sub(f.dirty.Bytes());
    f.in_use = 0;
    f.dirty.Clear();
    f.valid.Clear();
  }

  Header* header_;
  char* base_;
  uint32_t shard_index_;
  Shard* shard_;
  SharedLock lock_;
};

size_t NodeBlockTable::BytesFor(const Layout& layout) {
  return SizesOf(layout, sizeof(Header), sizeof(Shard), sizeof(Frame)).total;
}

void NodeBlockTable::Create(void* memory, const Layout& layout) {
  const Sizes sizes = SizesOf(layout, sizeof(Header), sizeof(Shard), sizeof(Frame));
  char* base = static_cast<char*>(memory);
  Header* header = new (base) Header();
  header->frame_size = layout.frame_size;
  header->frame_count = layout.frames;
  header->shard_count = sizes.shards;
  header->buckets_per_shard = sizes.buckets_per_shard;
  header->broken.store(0);
  header->epoch.store(1);
  header->dirty_bytes.store(0);
  header->modification_clock.store(0);
  header->held_bytes.store(0);
  header->charged_bytes.store(0);
  header->views.store(1);  // the creator's
  header->budgeted = layout.budgeted ? 1 : 0;
  header->shards_offset = sizes.shards_offset;
  header->frames_offset = sizes.frames_offset;
  header->buckets_offset = sizes.buckets_offset;
  header->data_offset = sizes.data_offset;

  Shard* shards = reinterpret_cast<Shard*>(base + header->shards_offset);
  for (uint32_t s = 0; s < sizes.shards; ++s) {
    Shard* shard = new (&shards[s]) Shard();
    shard->mutex.Initialize();
    shard->settled.Initialize();
    shard->lru_head = shard->lru_tail = shard->free_head = shard->untouched_head = kNone;
  }
  Frame* frames = reinterpret_cast<Frame*>(base + header->frames_offset);
  // Each shard's frames, in frame order, none with its pages yet.
  for (uint32_t id = layout.frames; id-- > 0;) {
    Frame* frame = new (&frames[id]) Frame();
    frame->in_use = 0;
    Shard& shard = shards[id % sizes.shards];
    frame->lru_next = shard.untouched_head;
    shard.untouched_head = id;
  }
  uint32_t* buckets = reinterpret_cast<uint32_t*>(base + header->buckets_offset);
  std::fill(buckets, buckets + static_cast<size_t>(sizes.shards) * sizes.buckets_per_shard,
            kNone);
  // Last, so that a process that checks the magic sees a finished table.
  std::atomic_thread_fence(std::memory_order_release);
  header->magic = kMagic;
}

NodeBlockTable::NodeBlockTable(void* memory) : header_(static_cast<Header*>(memory)) {}

uint64_t NodeBlockTable::frame_size() const { return header_->frame_size; }
uint32_t NodeBlockTable::frames() const { return header_->frame_count; }
uint64_t NodeBlockTable::dirty_bytes() const { return header_->dirty_bytes.load(); }
uint64_t NodeBlockTable::epoch() const { return header_->epoch.load(); }
uint64_t NodeBlockTable::held_bytes() const { return header_->held_bytes.load(); }
void NodeBlockTable::ShareBudget(std::shared_ptr<NodeBudget> budget) {
  // A table made without a budget charges none: what its frames hold was never counted.
  if (header_->budgeted) budget_ = std::move(budget);
}
bool NodeBlockTable::budgeted() const { return header_->budgeted != 0; }
void NodeBlockTable::AddView() { header_->views.fetch_add(1); }
std::optional<uint64_t> NodeBlockTable::RemoveView() {
  if (header_->views.fetch_sub(1) != 1) return std::nullopt;
  return header_->charged_bytes.exchange(0);
}
uint64_t NodeBlockTable::capacity_bytes() const {
  return header_->frame_size * header_->frame_count;
}
bool NodeBlockTable::broken() const { return header_->broken.load() != 0; }

namespace {

uint32_t ShardOf(uint64_t index, uint32_t shards) {
  return static_cast<uint32_t>(Mix(index) % shards);
}

// Reads bytes [begin, end) of the block from storage into `out`; bytes past the end of the
// file are zeros.
Status ReadStorage(BlockBackend& storage, uint64_t index, uint64_t begin, uint64_t end,
                   char* out) {
  uint64_t bytes_read = 0;
  Status status = storage.ReadRange(index, begin, end - begin, out, &bytes_read);
  storage.stats()->Add(Counter::storage_reads, 1);
  if (!status.ok()) return status;
  storage.stats()->Add(Counter::storage_read_bytes, bytes_read);
  if (bytes_read < end - begin) std::memset(out + bytes_read, 0, end - begin - bytes_read);
  return Status::OK();
}

// The smallest range holding every byte of [begin, end) that `valid` lacks; empty if none.
void SpanOfGaps(const ByteRanges& valid, uint32_t begin, uint32_t end, uint32_t* span_begin,
                uint32_t* span_end) {
  *span_begin = *span_end = 0;
  bool any = false;
  valid.ForEachGap(begin, end, [&](uint32_t gap_begin, uint32_t gap_end) {
    if (!any) *span_begin = gap_begin;
    *span_end = gap_end;
    any = true;
  });
}

}  // namespace

uint32_t NodeBlockTable::FindOrMakeFrame(ShardAccess& access, uint64_t index,
                                         BlockBackend& storage, bool* look_again) {
  *look_again = false;
  uint32_t id = access.Find(index);
  if (id != kNone) return id;
  uint32_t dirty_victim = kNone;
  id = access.Allocate(storage, budget_.get(), &dirty_victim);
  if (id != kNone) {
    access.Insert(id, index);
    return id;
  }
  // Only dirty frames could make room: write one back (the lock is released meanwhile, so the
  // caller looks again), unless that fails.
  if (dirty_victim != kNone && FlushFrameLocked(access, dirty_victim, storage).ok()) {
    *look_again = true;
  }
  return kNone;
}

void NodeBlockTable::ServeHit(ShardAccess& access, uint32_t id, uint32_t begin, uint32_t end,
                              char* out, bool waited, BlockBackend& storage) {
  Frame& frame = access.frame(id);
  std::memcpy(out, access.data(id) + begin, end - begin);
  access.Touch(id);
  storage.stats()->Add(Counter::cache_hits, 1);
  if (!frame.prefetched_unused) return;
  frame.prefetched_unused = 0;
  storage.stats()->Add(Counter::prefetch_used, 1);
  if (waited) storage.stats()->Add(Counter::prefetch_late, 1);
  storage.OnPrefetchOutcome(waited ? PrefetchOutcome::kUsedAfterWait
                                   : PrefetchOutcome::kUsedInTime);
}

Status NodeBlockTable::ReadBesideFetch(ShardAccess& access, uint32_t id, BlockBackend& storage,
                                       uint64_t index, uint32_t begin, uint32_t end, char* out) {
  // Copied with the lock held: the frame may hold another block once it is released.
  const ByteRanges valid = access.frame(id).valid;
  std::memcpy(out, access.data(id) + begin, end - begin);  // the gaps are overwritten below
  access.Touch(id);
  access.Unlock();
  uint32_t span_begin = 0, span_end = 0;
  SpanOfGaps(valid, begin, end, &span_begin, &span_end);
  std::vector<char>& fetched = Scratch(span_end - span_begin);
  const Status status = ReadStorage(storage, index, span_begin, span_end, fetched.data());
  storage.stats()->Add(Counter::cache_misses, 1);
  storage.stats()->Add(Counter::demand_fetches, 1);
  if (!status.ok()) return status;
  valid.ForEachGap(begin, end, [&](uint32_t gap_begin, uint32_t gap_end) {
    std::memcpy(out + (gap_begin - begin), fetched.data() + (gap_begin - span_begin),
                gap_end - gap_begin);
  });
  return Status::OK();
}

bool NodeBlockTable::StillDirty(const Frame& frame, const ByteRanges& written_back,
                                ByteRanges* still_dirty) {
  if (frame.rewritten_overflow) return false;
  *still_dirty = frame.dirty;
  for (int i = 0; i < written_back.count(); ++i) {
    if (!still_dirty->Remove(written_back.at(i).begin, written_back.at(i).end)) return false;
  }
  for (int i = 0; i < frame.rewritten.count(); ++i) {
    if (!still_dirty->Add(frame.rewritten.at(i).begin, frame.rewritten.at(i).end)) return false;
  }
  return true;
}

bool NodeBlockTable::LandFetch(ShardAccess& access, uint32_t id, uint32_t begin, uint32_t end,
                               uint32_t span_begin, uint32_t span_end, const char* fetched,
                               uint64_t claim_epoch, bool stale, char* out) {
  Frame& frame = access.frame(id);
  // Bytes forgotten during the fetch (a sync anywhere on the node, or clean bytes given up to
  // make room) may be newer on storage than what the fetch read, this rank's own writes among
  // them: the fetched bytes can serve no one.
  if (header_->epoch.load() != claim_epoch || stale) return false;
  bool covered = true;
  if (!access.KeepFetched(id, span_begin, span_end, fetched)) {
    // No room to keep them as valid (the dirty ranges fill the set): serve the caller from the
    // frame, whose bytes [span_begin, span_end) are all current now.
    frame.valid.ForEachGap(begin, end, [&](uint32_t gap_begin, uint32_t gap_end) {
      if (gap_begin < span_begin || gap_end > span_end) covered = false;
    });
    if (!covered) return false;
  } else if (!frame.valid.Covers(begin, end)) {
    return false;
  }
  std::memcpy(out, access.data(id) + begin, end - begin);
  access.Touch(id);
  return true;
}

Status NodeBlockTable::Read(BlockBackend& storage, uint64_t index, uint64_t offset,
                            uint64_t length, char* out, FetchScope scope) {
  if (length == 0) return Status::OK();
  const uint32_t begin = static_cast<uint32_t>(offset);
  const uint32_t end = static_cast<uint32_t>(offset + length);
  ShardAccess access(header_, ShardOf(index, header_->shard_count));
  bool waited = false;
  for (;;) {
    if (access.broken()) return BrokenError();
    bool look_again = false;
    const uint32_t id = FindOrMakeFrame(access, index, storage, &look_again);
    if (look_again) continue;
    if (id == kNone) {
      // Nothing to evict: every frame of the shard is busy. Storage serves it directly.
      access.Unlock();
      return ReadStorage(storage, index, begin, end, out);
    }
    Frame& frame = access.frame(id);
    if (frame.valid.Covers(begin, end)) {
      ServeHit(access, id, begin, end, out, waited, storage);
      return Status::OK();
    }
    frame.fetches.EndDead();  // their processes died: fetch their bytes again
    if (frame.fetches.BringAny(frame.valid, begin, end)) {
      // A fetch under way brings bytes this read needs: wait for it rather than read them again.
      waited = true;
      access.Wait();
      continue;
    }
    // Fetch, with one storage request, every byte the scope wants that is not valid; over a
    // short gap more, if the valid set has no room for another range.
    uint32_t span_begin = 0, span_end = 0;
    if (scope == FetchScope::kWholeBlock) {
      SpanOfGaps(frame.valid, 0, static_cast<uint32_t>(header_->frame_size), &span_begin,
                 &span_end);
    } else {
      SpanOfGaps(frame.valid, begin, end, &span_begin, &span_end);
    }
    frame.valid.WidenToFit(&span_begin, &span_end, span_end - span_begin);
    const uint64_t claim_epoch = header_->epoch.load();
    const int slot = access.Claim(id, span_begin, span_end);
    if (slot == FrameFetches::kNoSlot) {
      // The frame has as many fetches of other bytes under way as it holds: waiting for one
      // would add its time to this read's.
      return ReadBesideFetch(access, id, storage, index, begin, end, out);
    }
    frame.prefetched_unused = 0;  // a demand fetch: the block is not a prefetch's any more
    access.Unlock();
    access.PopulatePages(id, span_begin, span_end);
    // Straight into `out` when the fetch lies within the bytes asked for (LandFetch then copies
    // the frame's current bytes over them).
    char* fetched = span_begin >= begin && span_end <= end
                        ? out + (span_begin - begin)
                        : Scratch(span_end - span_begin).data();
    const Status status = ReadStorage(storage, index, span_begin, span_end, fetched);
    storage.stats()->Add(Counter::cache_misses, 1);
    storage.stats()->Add(Counter::demand_fetches, 1);
    const bool relocked = access.Relock();
    const bool stale = access.Release(id, slot);
    if (!relocked) return BrokenError();
    if (!status.ok()) return status;
    if (LandFetch(access, id, begin, end, span_begin, span_end, fetched, claim_epoch, stale,
                  out)) {
      return Status::OK();
    }
  }
}

Status NodeBlockTable::ReadSpan(BlockBackend& storage, uint64_t offset, uint64_t length,
                                char* out) {
  const uint64_t frame_size = header_->frame_size;
  struct Piece {
    uint64_t index;
    uint32_t begin, end;    // in the block
    uint64_t out_at;        // in `out`
    uint32_t frame = kNone; // claimed frame, or kNone: served later by Read
    int slot = FrameFetches::kNoSlot;  // the claim's in the frame's fetches
    uint32_t span_begin = 0, span_end = 0;
  };
  std::vector<Piece> later;
  std::vector<Piece> claimed;
  // The file bytes the storage request must cover: claimed gaps, and blocks the node does
  // not hold at all.
  uint64_t fetch_begin = UINT64_MAX, fetch_end = 0;
  auto fetch_too = [&](uint64_t begin, uint64_t end) {
    fetch_begin = std::min(fetch_begin, begin);
    fetch_end = std::max(fetch_end, end);
  };
  const uint64_t claim_epoch = header_->epoch.load();
  // 1. Missing bytes are claimed, one block at a time, so that no two shard locks are ever
  // held. Blocks whose bytes are cached, or that another process is fetching, are read after
  // ours land: the fetch goes straight into `out`, over the places of their bytes too. A
  // block the node does not hold is read as without stagio and not kept: a read with no
  // pattern is seldom read again, and filling frames for it would cost every such read a copy
  // and the page faults of fresh shared memory (measured: 1.11x plain's time on random reads).
  for (uint64_t at = offset; at < offset + length;) {
    Piece piece;
    piece.index = at / frame_size;
    piece.begin = static_cast<uint32_t>(at - piece.index * frame_size);
    piece.end = static_cast<uint32_t>(std::min<uint64_t>(frame_size, piece.begin + (offset + length - at)));
    piece.out_at = at - offset;
    at += piece.end - piece.begin;
    ShardAccess access(header_, ShardOf(piece.index, header_->shard_count));
    if (access.broken()) return BrokenError();
    const uint32_t id = access.Find(piece.index);
    if (id == kNone) {
      fetch_too(piece.index * frame_size + piece.begin, piece.index * frame_size + piece.end);
      storage.stats()->Add(Counter::cache_misses, 1);
      continue;
    }
    Frame& frame = access.frame(id);
    if (frame.valid.Covers(piece.begin, piece.end) ||
        frame.fetches.BringAny(frame.valid, piece.begin, piece.end)) {
      later.push_back(piece);
      continue;
    }
    SpanOfGaps(frame.valid, piece.begin, piece.end, &piece.span_begin, &piece.span_end);
    piece.slot = access.Claim(id, piece.span_begin, piece.span_end);
    if (piece.slot == FrameFetches::kNoSlot) {
      later.push_back(piece);
      continue;
    }
    frame.prefetched_unused = 0;  // a demand fetch: the block is not a prefetch's any more
    piece.frame = id;
    access.Unlock();
    access.PopulatePages(id, piece.span_begin, piece.span_end);
    fetch_too(piece.index * frame_size + piece.span_begin, piece.index * frame_size + piece.span_end);
    storage.stats()->Add(Counter::cache_misses, 1);
    claimed.push_back(piece);
  }
  // 2. One storage request from the first byte to fetch to the last, into `out`: a read that
  // misses costs at most one copy more than without stagio (into the frames).
  Status status;
  if (fetch_begin < fetch_end) {
    const uint64_t first_index = fetch_begin / frame_size;
    const uint64_t in_block = fetch_begin - first_index * frame_size;
    status = ReadStorage(storage, first_index, in_block, in_block + (fetch_end - fetch_begin),
                         out + (fetch_begin - offset));
    storage.stats()->Add(Counter::demand_fetches, 1);
  }
  // 3. Land each claimed piece.
  for (const Piece& piece : claimed) {
    ShardAccess access(header_, ShardOf(piece.index, header_->shard_count));
    const bool stale = access.Release(piece.frame, piece.slot);
    if (access.broken()) return BrokenError();
    if (!status.ok()) continue;
    const char* bytes = out + (piece.index * frame_size + piece.span_begin - offset);
    if (!LandFetch(access, piece.frame, piece.begin, piece.end, piece.span_begin, piece.span_end,
                   bytes, claim_epoch, stale, out + piece.out_at)) {
      later.push_back(piece);
    }
  }
  if (!status.ok()) return status;
  // 4. The rest, one block at a time.
  for (const Piece& piece : later) {
    const Status read = Read(storage, piece.index, piece.begin, piece.end - piece.begin,
                             out + piece.out_at, FetchScope::kRequestedBytes);
    if (!read.ok()) return read;
  }
  return Status::OK();
}

Status NodeBlockTable::Write(BlockBackend& storage, uint64_t index, uint64_t offset,
                             uint64_t length, const char* in) {
  if (length == 0) return Status::OK();
  const uint32_t begin = static_cast<uint32_t>(offset);
  const uint32_t end = static_cast<uint32_t>(offset + length);
  ShardAccess access(header_, ShardOf(index, header_->shard_count));
  for (;;) {
    if (access.broken()) return BrokenError();
    bool look_again = false;
    const uint32_t id = FindOrMakeFrame(access, index, storage, &look_again);
    if (look_again) continue;
    if (id == kNone) {
      // Every frame of the shard is busy: write through. A frame of the block made meanwhile
      // (by a read of another rank) must not keep the bytes storage had before.
      access.Unlock();
      const Status status = storage.WriteRange(index, begin, in, length);
      storage.stats()->Add(Counter::storage_writes, 1);
      if (!access.Relock()) return BrokenError();
      const uint32_t made = access.Find(index);
      if (made != kNone) access.ForgetValidRange(access.frame(made), begin, end);
      return status;
    }
    Frame& frame = access.frame(id);
    ByteRanges dirty = frame.dirty;
    if (!dirty.Add(begin, end)) {
      // No room for another dirty range: write the frame back first.
      const Status status = FlushFrameLocked(access, id, storage);
      if (!status.ok()) return status;
      continue;
    }
    std::memcpy(access.data(id) + begin, in, length);
    access.header()->dirty_bytes.fetch_add(dirty.Bytes() - frame.dirty.Bytes());
    frame.dirty = dirty;
    access.MarkValid(frame, begin, end);  // dirty bytes are valid: always room for them
    ++frame.generation;
    if (frame.flusher != 0 && !frame.rewritten.Add(begin, end)) frame.rewritten_overflow = 1;
    frame.last_modified = access.header()->modification_clock.fetch_add(1) + 1;
    access.Touch(id);
    return Status::OK();
  }
}

Status NodeBlockTable::FlushFrameLocked(ShardAccess& access, uint32_t id,
                                        BlockBackend& storage) {
  auto& frame = access.frame(id);
  if (!access.WaitOutWriteBack(frame)) return BrokenError();
  if (!frame.in_use || frame.dirty.empty()) return Status::OK();
  const ByteRanges dirty = frame.dirty;
  const uint64_t generation = frame.generation;
  const uint64_t index = frame.index;
  std::vector<char>& copy = Scratch(dirty.Bytes());
  uint64_t at = 0;
  for (int i = 0; i < dirty.count(); ++i) {
    const auto& range = dirty.at(i);
    std::memcpy(copy.data() + at, access.data(id) + range.begin, range.end - range.begin);
    at += range.end - range.begin;
  }
  frame.flusher = getpid();
  frame.rewritten.Clear();
  frame.rewritten_overflow = 0;
  access.Unlock();
  Status status;
  at = 0;
  for (int i = 0; i < dirty.count() && status.ok(); ++i) {
    const auto& range = dirty.at(i);
    status = storage.WriteRange(index, range.begin, copy.data() + at, range.end - range.begin);
    storage.stats()->Add(Counter::storage_writes, 1);
    at += range.end - range.begin;
  }
  const bool relocked = access.Relock();
  frame.flusher = 0;
  access.NotifyAll();
  if (!relocked) return BrokenError();
  if (!status.ok()) {
    storage.stats()->Add(Counter::write_back_errors, 1);
    storage.RecordWriteBackError(status);
    return status;
  }
  storage.stats()->Add(Counter::dirty_bytes_flushed, dirty.Bytes());
  // Written again while on its way: what was written since stays dirty, and goes again with
  // the newer bytes. Only that: a frame filled piece by piece while its earlier pieces are
  // written back (a program writing a block in chunks) would otherwise write every piece again
  // with each later one (measured: 6.5 times the bytes the program wrote, on a slow device).
  ByteRanges still_dirty;
  if (frame.generation != generation && !StillDirty(frame, dirty, &still_dirty)) {
    return Status::OK();  // the sets have no room to tell: all of it stays dirty
  }
  access.header()->dirty_bytes.fetch_sub(frame.dirty.Bytes() - still_dirty.Bytes());
  frame.dirty = still_dirty;
  return Status::OK();
}

PrefetchResult NodeBlockTable::Prefetch(BlockBackend& storage, uint64_t index, uint64_t begin,
                                        uint64_t end, uint64_t epoch) {
  ShardAccess access(header_, ShardOf(index, header_->shard_count));
  const uint32_t want_begin = static_cast<uint32_t>(begin);
  const uint32_t want_end = static_cast<uint32_t>(std::min<uint64_t>(end, header_->frame_size));
  uint32_t id = kNone;
  uint32_t span_begin = 0, span_end = 0;
  int slot = FrameFetches::kNoSlot;
  while (slot == FrameFetches::kNoSlot) {
    if (access.broken()) return PrefetchResult::kFailed;
    if (epoch != header_->epoch.load()) return PrefetchResult::kStale;
    id = access.Find(index);
    if (id == kNone) {
      uint32_t dirty_victim = kNone;
      id = access.Allocate(storage, budget_.get(), &dirty_victim);
      if (id == kNone) return PrefetchResult::kFailed;  // no room: a prefetch never writes back
      access.Insert(id, index);
    }
    Frame& frame = access.frame(id);
    if (frame.valid.Covers(want_begin, want_end)) return PrefetchResult::kAlreadyCached;
    frame.fetches.EndDead();  // their processes died: fetch their bytes again
    if (frame.fetches.BringAll(frame.valid, want_begin, want_end)) {
      return PrefetchResult::kInFlight;
    }
    SpanOfGaps(frame.valid, want_begin, want_end, &span_begin, &span_end);
    frame.valid.WidenToFit(&span_begin, &span_end, span_end - span_begin);
    slot = access.Claim(id, span_begin, span_end);
    // The frame has as many fetches under way as it holds: this one comes after one of them,
    // on this prefetching thread, not on a reader's.
    if (slot == FrameFetches::kNoSlot && !access.Wait()) return PrefetchResult::kFailed;
  }
  Frame& frame = access.frame(id);
  access.Unlock();
  access.PopulatePages(id, span_begin, span_end);
  char* fetched = Scratch(span_end - span_begin).data();
  const Status status = ReadStorage(storage, index, span_begin, span_end, fetched);
  const bool relocked = access.Relock();
  const bool stale = access.Release(id, slot);
  if (!relocked || !status.ok()) return PrefetchResult::kFailed;
  if (header_->epoch.load() != epoch || stale) return PrefetchResult::kStale;
  access.KeepFetched(id, span_begin, span_end, fetched);
  // Counted per block, as prefetch_used and prefetch_wasted are: several prefetches into a
  // block that no read has used yet are one prefetched block.
  if (!frame.prefetched_unused) storage.stats()->Add(Counter::prefetch_issued, 1);
  frame.prefetched_unused = 1;
  return PrefetchResult::kFetched;
}

bool NodeBlockTable::Contains(uint64_t index, uint64_t begin, uint64_t end) {
  ShardAccess access(header_, ShardOf(index, header_->shard_count));
  const uint32_t id = access.Find(index);
  if (id == kNone) return false;
  const Frame& frame = access.frame(id);
  const uint32_t want_end = static_cast<uint32_t>(std::min<uint64_t>(end, header_->frame_size));
  if (!frame.valid.Covers(static_cast<uint32_t>(begin), want_end) &&
      !frame.fetches.BringAll(frame.valid, static_cast<uint32_t>(begin), want_end)) {
    return false;
  }
  access.Touch(id);
  return true;
}

Status NodeBlockTable::Forget(BlockBackend& storage, uint64_t index, uint64_t offset,
                              uint64_t length) {
  if (length == 0) return Status::OK();
  const uint32_t begin = static_cast<uint32_t>(offset);
  const uint32_t end = static_cast<uint32_t>(offset + length);
  ShardAccess access(header_, ShardOf(index, header_->shard_count));
  for (;;) {
    if (access.broken()) return BrokenError();
    const uint32_t id = access.Find(index);
    if (id == kNone) return Status::OK();
    Frame& frame = access.frame(id);
    // A write-back on its way carries a copy of these bytes: it must land before the new ones.
    if (frame.flusher != 0) {
      if (!access.WaitOutWriteBack(frame)) return BrokenError();
      continue;  // the frame may hold another block by now
    }
    ByteRanges dirty = frame.dirty;
    if (!dirty.Remove(begin, end)) {
      // Cutting a dirty range in two needs room the set does not have: write the frame back
      // first (the old bytes reach storage before the new ones), then cut what is left.
      const Status status = FlushFrameLocked(access, id, storage);
      if (!status.ok()) return status;
      continue;
    }
    access.header()->dirty_bytes.fetch_sub(frame.dirty.Bytes() - dirty.Bytes());
    frame.dirty = dirty;
    access.ForgetValidRange(frame, begin, end);
    return Status::OK();
  }
}

Status NodeBlockTable::FlushAll(BlockBackend& storage) {
  // Every rank of the node flushes at close, and a rank may flush on several threads at once
  // (BlockCache::kWriteBackStreams). A first pass leaves alone the frames someone is writing
  // back, and starts at a shard of its own, so that the flushers write different frames at
  // once rather than queue for the same. The second waits those out: when it returns, every
  // byte dirty at the call is on storage.
  static std::atomic<uint32_t> calls{0};
  const uint32_t start = static_cast<uint32_t>(getpid()) + calls++;
  Status first;
  for (const bool skip_busy : {true, false}) {
    for (uint32_t i = 0; i < header_->shard_count; ++i) {
      const uint32_t shard = skip_busy ? (start + i) % header_->shard_count : i;
      ShardAccess access(header_, shard);
      if (access.broken()) return BrokenError();
      access.ForEachFrame([&](uint32_t id) {
        const Frame& frame = access.frame(id);
        if (!frame.in_use || frame.dirty.empty() || (skip_busy && frame.flusher != 0)) return;
        const Status status = FlushFrameLocked(access, id, storage);
        if (first.ok()) first = status;
      });
    }
  }
  return first;
}

Status NodeBlockTable::FlushOldestUntil(BlockBackend& storage, uint64_t target) {
  // Each round writes back one frame, so this ends after at most one round per frame.
  for (uint32_t round = 0; round < header_->frame_count; ++round) {
    if (header_->dirty_bytes.load() <= target) return Status::OK();
    uint32_t oldest_shard = kNone, oldest = kNone;
    uint64_t oldest_time = UINT64_MAX;
    for (uint32_t shard = 0; shard < header_->shard_count; ++shard) {
      ShardAccess access(header_, shard);
      if (access.broken()) return BrokenError();
      access.ForEachFrame([&](uint32_t id) {
        const Frame& frame = access.frame(id);
        if (frame.in_use && !frame.dirty.empty() && frame.flusher == 0 &&
            frame.last_modified < oldest_time) {
          oldest_time = frame.last_modified;
          oldest_shard = shard;
          oldest = id;
        }
      });
    }
    if (oldest == kNone) return Status::OK();
    ShardAccess access(header_, oldest_shard);
    const Status status = FlushFrameLocked(access, oldest, storage);
    if (!status.ok()) return status;
  }
  return Status::OK();
}

void NodeBlockTable::DropClean(BlockBackend& storage) {
  // First: a fetch under way now can no longer leave its bytes behind.
  header_->epoch.fetch_add(1);
  for (uint32_t shard = 0; shard < header_->shard_count; ++shard) {
    ShardAccess access(header_, shard);
    if (access.broken()) return;
    access.ForEachFrame([&](uint32_t id) {
      Frame& frame = access.frame(id);
      if (!frame.in_use) return;
      if (frame.dirty.empty() && !frame.fetches.busy() && frame.flusher == 0) {
        access.Remove(id, storage);
      } else {
        access.ForgetCleanBytes(frame);
      }
    });
  }
}

void NodeBlockTable::DiscardAll(BlockBackend& storage) {
  header_->epoch.fetch_add(1);
  for (uint32_t shard = 0; shard < header_->shard_count; ++shard) {
    ShardAccess access(header_, shard);
    bool busy = true;
    while (busy && !access.broken()) {
      busy = false;
      access.ForEachFrame([&](uint32_t id) {
        Frame& frame = access.frame(id);
        if (!frame.in_use) return;
        frame.fetches.EndDead();
        if (frame.flusher != 0 && !ProcessAlive(frame.flusher)) frame.flusher = 0;
        if (frame.fetches.busy() || frame.flusher != 0) {
          busy = true;
          return;
        }
        access.Remove(id, storage);
      });
      if (busy) access.Wait();
    }
  }
}

uint32_t NodeBlockTable::BlocksHeld() {
  uint32_t held = 0;
  for (uint32_t shard = 0; shard < header_->shard_count; ++shard) {
    ShardAccess access(header_, shard);
    access.ForEachFrame([&](uint32_t id) { held += access.frame(id).in_use; });
  }
  return held;
}

}  // namespace stagio
