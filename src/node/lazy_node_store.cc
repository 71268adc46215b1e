#include "node/lazy_node_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/log.h"

namespace stagio {

namespace {

NodeSegment::Place FirstComerMakes(NodeSegment::Place place) {
  place.first_comer_makes = true;
  return place;
}

Status NoTable() {
  return Status::IOError("no cache for the file's blocks: it is closing, or memory ran out");
}

}  // namespace

LazyNodeStore::LazyNodeStore(NodeSegment::Place place, uint64_t block_size,
                             uint64_t bytes_per_rank, std::string who)
    : place_(FirstComerMakes(std::move(place))),
      block_size_(block_size),
      bytes_per_rank_(bytes_per_rank),
      node_capacity_bytes_(
          NodeSegment::LayoutFor(block_size, bytes_per_rank, place_.node_size, false).frames *
          block_size),
      who_(std::move(who)) {}

LazyNodeStore::~LazyNodeStore() {
  segment_.reset();
  own_table_.reset();
  if (own_memory_ != nullptr) munmap(own_memory_, own_bytes_);
  if (remove_name_) shm_unlink(place_.name.c_str());
}

bool LazyNodeStore::MakeNow(bool is_leader) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (active_.load() == nullptr) {
    NodeSegment::Place place = place_;
    place.first_comer_makes = false;
    place.is_leader = is_leader;
    active_.store(MakeOrAttach(place));
  }
  return shares_node_table();
}

NodeBlockTable* LazyNodeStore::Table(bool make) {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  if (table != nullptr) return table;
  std::lock_guard<std::mutex> lock(mutex_);
  table = active_.load(std::memory_order_relaxed);
  if (table != nullptr) return table;
  if (closing_.load()) return nullptr;
  if (make) {
    table = MakeOrAttach(place_);
  } else {
    // Only a node-mate's table, if there is one: nothing to make it for. One that cannot be
    // used (its maker failed) needs no dropping either.
    Status status;
    segment_ = NodeSegment::AttachIfThere(place_, &status);
    table = segment_ ? &segment_->table() : nullptr;
  }
  active_.store(table, std::memory_order_release);
  return table;
}

NodeBlockTable* LazyNodeStore::MakeOrAttach(const NodeSegment::Place& place) {
  Status status;
  bool created_name = false;
  segment_ = NodeSegment::Create(place, block_size_, bytes_per_rank_, &status,
                                 std::chrono::seconds(10), &created_name);
  if (segment_) return &segment_->table();
  // A maker that failed left a door that says so, for its node-mates to see at once: nobody
  // removes that name but this rank, when it is done with the file.
  remove_name_ = created_name;
  WarnOnce(true, who_ + " cannot share its node's cache (" + status.message() +
                     "); it caches its own blocks");
  on_own_.store(true);
  return MakeOwnTable();
}

NodeBlockTable* LazyNodeStore::MakeOwnTable() {
  NodeBlockTable::Layout layout =
      NodeSegment::LayoutFor(block_size_, bytes_per_rank_, 1, /*budgeted=*/false);
  // Anonymous memory: a frame takes its pages when it is first filled, as in the node's table.
  // If even the address space for that is refused, a table of one frame.
  for (const uint32_t frames : {layout.frames, uint32_t{1}}) {
    layout.frames = frames;
    own_bytes_ = NodeBlockTable::BytesFor(layout);
    void* memory =
        mmap(nullptr, own_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory != MAP_FAILED) {
      own_memory_ = memory;
      break;
    }
  }
  if (own_memory_ == nullptr) return nullptr;
  NodeBlockTable::Create(own_memory_, layout);
  own_table_ = std::make_unique<NodeBlockTable>(own_memory_);
  return own_table_.get();
}

Status LazyNodeStore::Read(BlockBackend& storage, uint64_t index, uint64_t offset,
                           uint64_t length, char* out, FetchScope scope) {
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return NoTable();
  return table->Read(storage, index, offset, length, out, scope);
}

Status LazyNodeStore::ReadSpan(BlockBackend& storage, uint64_t offset, uint64_t length,
                               char* out) {
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return NoTable();
  return table->ReadSpan(storage, offset, length, out);
}

Status LazyNodeStore::Write(BlockBackend& storage, uint64_t index, uint64_t offset,
                            uint64_t length, const char* in) {
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return NoTable();
  return table->Write(storage, index, offset, length, in);
}

PrefetchResult LazyNodeStore::Prefetch(BlockBackend& storage, uint64_t index, uint64_t begin,
                                       uint64_t end, uint64_t epoch) {
  if (closing_.load()) return PrefetchResult::kStale;
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return PrefetchResult::kFailed;
  if ((epoch & kBeforeTable) != 0) {
    // Planned before this rank had a table: still good if no DropClean of this rank came since.
    if (epoch != (kBeforeTable | drops_.load())) return PrefetchResult::kStale;
    epoch = table->epoch();
  }
  return table->Prefetch(storage, index, begin, end, epoch);
}

bool LazyNodeStore::Contains(uint64_t index, uint64_t begin, uint64_t end) {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr && table->Contains(index, begin, end);
}

uint64_t LazyNodeStore::epoch() const {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr ? table->epoch() : kBeforeTable | drops_.load();
}

Status LazyNodeStore::Forget(BlockBackend& storage, uint64_t index, uint64_t offset,
                             uint64_t length) {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr ? table->Forget(storage, index, offset, length) : Status::OK();
}

Status LazyNodeStore::FlushAll(BlockBackend& storage) {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr ? table->FlushAll(storage) : Status::OK();
}

Status LazyNodeStore::FlushOldestUntil(BlockBackend& storage, uint64_t target_dirty_bytes) {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr ? table->FlushOldestUntil(storage, target_dirty_bytes) : Status::OK();
}

void LazyNodeStore::DropClean(BlockBackend& storage) {
  drops_.fetch_add(1);
  NodeBlockTable* table = Table(false);
  if (table != nullptr) table->DropClean(storage);
}

uint64_t LazyNodeStore::dirty_bytes() const {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr ? table->dirty_bytes() : 0;
}

uint64_t LazyNodeStore::capacity_bytes() const {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr ? table->capacity_bytes() : node_capacity_bytes_;
}

}  // namespace stagio
