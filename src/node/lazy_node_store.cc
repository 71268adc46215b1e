#include "node/lazy_node_store.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "common/log.h"

namespace stagio {

namespace {

uint64_t FramesPerRank(uint64_t block_size, uint64_t bytes_per_rank) {
  return std::max<uint64_t>(1, bytes_per_rank / std::max<uint64_t>(1, block_size));
}

NodeSegment::Place FirstComerMakes(NodeSegment::Place place) {
  place.first_comer_makes = true;
  return place;
}

// True if a shared-memory object of this name exists (a node-mate made the table).
bool Exists(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace

LazyNodeStore::LazyNodeStore(NodeSegment::Place place, uint64_t block_size,
                             uint64_t bytes_per_rank, std::string who)
    : place_(FirstComerMakes(std::move(place))),
      block_size_(block_size),
      bytes_per_rank_(bytes_per_rank),
      node_capacity_bytes_(FramesPerRank(block_size, bytes_per_rank) *
                           static_cast<uint64_t>(std::max(1, place_.node_size)) * block_size),
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
    active_.store(Attach(place, is_leader));
  }
  return shares_node_table();
}

NodeBlockTable* LazyNodeStore::Table(bool make) {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  if (table != nullptr) return table;
  std::lock_guard<std::mutex> lock(mutex_);
  table = active_.load(std::memory_order_relaxed);
  if (table != nullptr) return table;
  if (!make && (closing_.load() || !Exists(place_.name))) return nullptr;
  table = Attach(place_, make);
  active_.store(table, std::memory_order_release);
  return table;
}

NodeBlockTable* LazyNodeStore::Attach(const NodeSegment::Place& place, bool make) {
  Status status;
  segment_ = NodeSegment::Create(place, block_size_, bytes_per_rank_, &status);
  if (segment_) return &segment_->table();
  // A maker that failed left a door that says so, for its node-mates to see at once: nobody
  // removes that name but this rank, when it is done with the file.
  remove_name_ = make;
  WarnOnce(true, who_ + " cannot share its node's cache (" + status.message() +
                     "); it caches its own blocks");
  on_own_.store(true);
  return MakeOwnTable();
}

NodeBlockTable* LazyNodeStore::MakeOwnTable() {
  NodeBlockTable::Layout layout;
  layout.frame_size = block_size_;
  layout.frames = static_cast<uint32_t>(
      std::min<uint64_t>(FramesPerRank(block_size_, bytes_per_rank_), 1u << 30));
  own_bytes_ = NodeBlockTable::BytesFor(layout);
  // Anonymous memory: a frame takes its pages when it is first filled, as in the node's table.
  void* memory =
      mmap(nullptr, own_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    // Not even that: a table of one frame, from the heap.
    layout.frames = 1;
    own_bytes_ = NodeBlockTable::BytesFor(layout);
    memory = mmap(nullptr, own_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                  0);
    if (memory == MAP_FAILED) return nullptr;
  }
  own_memory_ = memory;
  NodeBlockTable::Create(own_memory_, layout);
  own_table_ = std::make_unique<NodeBlockTable>(own_memory_);
  return own_table_.get();
}

Status LazyNodeStore::Read(BlockBackend& storage, uint64_t index, uint64_t offset,
                           uint64_t length, char* out, FetchScope scope) {
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return Status::IOError("no memory for a cache of the file's blocks");
  return table->Read(storage, index, offset, length, out, scope);
}

Status LazyNodeStore::ReadSpan(BlockBackend& storage, uint64_t offset, uint64_t length,
                               char* out) {
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return Status::IOError("no memory for a cache of the file's blocks");
  return table->ReadSpan(storage, offset, length, out);
}

Status LazyNodeStore::Write(BlockBackend& storage, uint64_t index, uint64_t offset,
                            uint64_t length, const char* in) {
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return Status::IOError("no memory for a cache of the file's blocks");
  return table->Write(storage, index, offset, length, in);
}

PrefetchResult LazyNodeStore::Prefetch(BlockBackend& storage, uint64_t index, uint64_t begin,
                                       uint64_t end, uint64_t epoch) {
  NodeBlockTable* table = Table(true);
  if (table == nullptr) return PrefetchResult::kFailed;
  return table->Prefetch(storage, index, begin, end, epoch);
}

bool LazyNodeStore::Contains(uint64_t index, uint64_t begin, uint64_t end) {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr && table->Contains(index, begin, end);
}

uint64_t LazyNodeStore::epoch() const {
  NodeBlockTable* table = active_.load(std::memory_order_acquire);
  return table != nullptr ? table->epoch() : 0;
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
