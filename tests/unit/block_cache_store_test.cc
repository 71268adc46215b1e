// BlockCache with a file registered with a shared store (the node cache): every call for the
// file reaches the store, the cache itself holds none of its blocks, epochs are the store's,
// and the store's dirty share counts toward the water marks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "cache/shared_block_store.h"
#include "node/node_block_table.h"
#include "support/in_memory_block_backend.h"

namespace stagio {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kFile = 7;

class BlockCacheStoreTest : public ::testing::Test {
 protected:
  BlockCacheStoreTest()
      : memory_(NodeBlockTable::BytesFor(Layout()) / sizeof(uint64_t) + 1),
        backend_(std::make_shared<test_support::InMemoryBlockBackend>(
            kBlock, std::vector<char>(16 * kBlock, 'o'))),
        cache_(/*capacity_bytes=*/4 * kBlock, kBlock) {
    NodeBlockTable::Create(memory_.data(), Layout());
    table_ = std::make_shared<NodeBlockTable>(memory_.data());
    cache_.RegisterFile(kFile, backend_, kBlock, table_);
  }
  ~BlockCacheStoreTest() override { cache_.UnregisterFile(kFile); }

  static NodeBlockTable::Layout Layout() {
    NodeBlockTable::Layout layout;
    layout.frame_size = kBlock;
    layout.frames = 8;  // twice the cache's own capacity: a node of two ranks
    return layout;
  }

  std::vector<uint64_t> memory_;  // the table's memory (one process here)
  std::shared_ptr<test_support::InMemoryBlockBackend> backend_;
  std::shared_ptr<NodeBlockTable> table_;
  BlockCache cache_;
};

TEST_F(BlockCacheStoreTest, ReadsAndWritesGoToTheStore) {
  ASSERT_TRUE(cache_.Write(kFile, 1, 100, 5, "hello").ok());
  EXPECT_EQ(table_->dirty_bytes(), 5u);
  EXPECT_EQ(cache_.block_count(), 0u);  // nothing in the process's own cache
  std::vector<char> out(10);
  ASSERT_TRUE(cache_.Read(kFile, 1, 98, 10, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), 10), std::string("oo") + "hello" + "ooo");
  ASSERT_TRUE(cache_.ReadSpan(kFile, kBlock - 2, 4, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), 4), "oooo");
  EXPECT_EQ(backend_->StorageBytes(kBlock + 100, 5), "ooooo");
  ASSERT_TRUE(cache_.FlushFile(kFile).ok());
  EXPECT_EQ(backend_->StorageBytes(kBlock + 100, 5), "hello");
  EXPECT_EQ(table_->dirty_bytes(), 0u);
  EXPECT_EQ(cache_.block_count(), 0u);
}

TEST_F(BlockCacheStoreTest, EpochsArePlannedAgainstTheStore) {
  const uint64_t planned = cache_.InvalidationEpoch(kFile);
  EXPECT_EQ(planned, table_->epoch());
  EXPECT_EQ(cache_.PrefetchBlocks(kFile, 2, 2, planned), PrefetchResult::kFetched);
  EXPECT_TRUE(cache_.Contains(kFile, 2));
  EXPECT_TRUE(cache_.Contains(kFile, 3));
  EXPECT_EQ(cache_.PrefetchBlocks(kFile, 2, 1, planned), PrefetchResult::kAlreadyCached);
  // A sync on any rank of the node renews the store's epoch: what was planned before is stale.
  cache_.DropCleanBlocks(kFile);
  EXPECT_NE(cache_.InvalidationEpoch(kFile), planned);
  EXPECT_FALSE(cache_.Contains(kFile, 2));
  EXPECT_EQ(cache_.PrefetchBlocks(kFile, 2, 1, planned), PrefetchResult::kStale);
  EXPECT_EQ(cache_.PrefetchBytes(kFile, 5 * kBlock + 10, 20, cache_.InvalidationEpoch(kFile)),
            PrefetchResult::kFetched);
}

TEST_F(BlockCacheStoreTest, DiscardKeepsDirtyBytesThatOtherRanksMayStillOwn) {
  ASSERT_TRUE(cache_.Write(kFile, 0, 0, 3, "abc").ok());
  cache_.DiscardFile(kFile);
  std::vector<char> out(3);
  ASSERT_TRUE(cache_.Read(kFile, 0, 0, 3, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), 3), "abc");
}

TEST_F(BlockCacheStoreTest, TheStoresDirtyShareCountsTowardTheWaterMarks) {
  // Half the store dirty is half the cache's capacity dirty, whatever the sizes.
  const std::string half(4 * kBlock / 4, 'd');
  for (uint64_t index = 0; index < 4; ++index) {
    ASSERT_TRUE(cache_.Write(kFile, index, 0, half.size(), half.data()).ok());
  }
  EXPECT_EQ(table_->dirty_bytes(), 4 * kBlock);  // half of the store's 8 blocks
  EXPECT_EQ(cache_.dirty_bytes(), 2 * kBlock);   // half of the cache's 4
  ASSERT_TRUE(cache_.FlushOldestUntil(kBlock).ok());
  EXPECT_LE(table_->dirty_bytes(), 2 * kBlock);  // down to a quarter of the store
}

}  // namespace
}  // namespace stagio
