// The shared in-memory backend (which also logs the prefetch outcomes the cache reports),
// logging every ReadRange as the block it starts in, the offset in that block and the length
// asked for: the storage requests a test expects, one per fetch or per run of blocks.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "block_piece_compare.h"
#include "in_memory_block_backend.h"

namespace stagio {
namespace test_support {

class ReadLoggingBackend : public InMemoryBlockBackend {
 public:
  // A ReadRange call: the block it starts in, and the range asked for from there.
  using ReadRecord = BlockPiece;

  using InMemoryBlockBackend::InMemoryBlockBackend;

  // ReadRange calls that started in block `index`.
  int reads_of(uint64_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    int count = 0;
    for (const ReadRecord& record : reads_) count += record.index == index ? 1 : 0;
    return count;
  }
  std::vector<ReadRecord> reads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return reads_;
  }

 private:
  void OnReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length) override {
    reads_.push_back({index, offset_in_block, length});
  }

  std::vector<ReadRecord> reads_;
};

}  // namespace test_support
}  // namespace stagio
