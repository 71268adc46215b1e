// The node cache made when a rank first needs it (LazyNodeStore): no shared memory until a
// block goes in, the first comer makes it and the others attach to the same table, a rank
// that has not attached still drops a node-mate's stale bytes at sync, and a rank that cannot
// share the table caches on its own with correct bytes.
#include "node/lazy_node_store.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "support/in_memory_block_backend.h"

namespace stagio {
namespace {

constexpr uint64_t kBlock = 4096;

class LazyNodeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = NodeSegment::NameFor("lazytest" + std::to_string(getpid()), 0, serial_++, 11);
  }
  void TearDown() override { shm_unlink(name_.c_str()); }

  // A node-mate's store of the file: `node_size` ranks, 4 blocks each.
  std::unique_ptr<LazyNodeStore> Mate(int node_size = 2,
                                      uint64_t bytes_per_rank = 4 * kBlock) const {
    NodeSegment::Place place;
    place.name = name_;
    place.node_size = node_size;
    return std::make_unique<LazyNodeStore>(place, kBlock, bytes_per_rank, "a test rank");
  }
  bool NameExists() const { return access(("/dev/shm" + name_).c_str(), F_OK) == 0; }

  static uint64_t serial_;
  std::string name_;
  test_support::InMemoryBlockBackend storage_{kBlock, std::vector<char>(4 * kBlock, 'o')};
};
uint64_t LazyNodeStoreTest::serial_ = 0;

TEST_F(LazyNodeStoreTest, NoSharedMemoryUntilABlockGoesIn) {
  auto store = Mate();
  EXPECT_FALSE(store->Contains(0, 0, kBlock));
  EXPECT_TRUE(store->FlushAll(storage_).ok());
  EXPECT_TRUE(store->FlushOldestUntil(storage_, 0).ok());
  EXPECT_TRUE(store->Forget(storage_, 0, 0, kBlock).ok());
  store->DropClean(storage_);
  EXPECT_EQ(store->dirty_bytes(), 0u);
  EXPECT_EQ(store->capacity_bytes(), 2 * 4 * kBlock);  // the node's, before it exists
  EXPECT_FALSE(store->has_table());
  EXPECT_FALSE(NameExists());
  EXPECT_EQ(storage_.read_calls(), 0);

  char byte = 0;
  ASSERT_TRUE(store->Read(storage_, 0, 5, 1, &byte, FetchScope::kWholeBlock).ok());
  EXPECT_EQ(byte, 'o');
  EXPECT_TRUE(store->has_table());
  EXPECT_TRUE(store->shares_node_table());
  EXPECT_TRUE(NameExists());  // for node-mates still to come
  EXPECT_TRUE(store->Contains(0, 0, kBlock));
}

TEST_F(LazyNodeStoreTest, TheFirstComerMakesTheTableAndTheOthersShareIt) {
  auto first = Mate();
  auto second = Mate();
  const std::string written(100, 'w');
  ASSERT_TRUE(second->Write(storage_, 1, 0, written.size(), written.data()).ok());
  EXPECT_EQ(first->dirty_bytes(), 0u);  // not attached yet: it holds nothing
  std::string read(written.size(), '\0');
  ASSERT_TRUE(first->Read(storage_, 1, 0, read.size(), read.data(), FetchScope::kWholeBlock)
                  .ok());
  EXPECT_EQ(read, written);  // the node-mate's dirty bytes, from the one table
  EXPECT_EQ(first->dirty_bytes(), written.size());
  // Every node-mate has attached: the name goes, the table stays.
  EXPECT_FALSE(NameExists());
  ASSERT_TRUE(first->FlushAll(storage_).ok());
  EXPECT_EQ(second->dirty_bytes(), 0u);
  EXPECT_EQ(std::string(storage_.storage().data() + kBlock, written.size()), written);
}

// After sync-barrier-sync, a rank that never used the table must not read bytes a node-mate
// fetched before another rank's write: its sync drops them, attaching to do so.
TEST_F(LazyNodeStoreTest, ARankThatNeverAttachedStillDropsStaleBytesAtSync) {
  auto reader = Mate(3);
  auto syncing = Mate(3);
  char byte = 0;
  ASSERT_TRUE(reader->Read(storage_, 2, 0, 1, &byte, FetchScope::kWholeBlock).ok());
  ASSERT_TRUE(reader->Contains(2, 0, kBlock));
  syncing->DropClean(storage_);
  EXPECT_TRUE(syncing->has_table());
  EXPECT_FALSE(reader->Contains(2, 0, kBlock));

  // A rank in close drops nothing for later reads of its own: it attaches to nothing.
  ASSERT_TRUE(reader->Read(storage_, 2, 0, 1, &byte, FetchScope::kWholeBlock).ok());
  auto closing = Mate(3);
  closing->Closing();
  closing->DropClean(storage_);
  EXPECT_FALSE(closing->has_table());
  EXPECT_TRUE(reader->Contains(2, 0, kBlock));
}

// /dev/shm cannot hold the table: the first comer caches on its own, its node-mate sees the
// failure at once and does too, and both still read and write the right bytes. The failed
// door's name goes with the rank that left it, though a third node-mate never came.
TEST_F(LazyNodeStoreTest, ARankThatCannotShareTheTableCachesOnItsOwn) {
  const uint64_t more_than_dev_shm = uint64_t{1} << 50;
  auto first = Mate(3, more_than_dev_shm);
  const std::string written(10, 'x');
  ASSERT_TRUE(first->Write(storage_, 3, 0, written.size(), written.data()).ok());
  EXPECT_FALSE(first->shares_node_table());
  EXPECT_TRUE(first->has_table());
  auto second = Mate(3, more_than_dev_shm);
  char byte = 0;
  ASSERT_TRUE(second->Read(storage_, 3, 0, 1, &byte, FetchScope::kWholeBlock).ok());
  EXPECT_EQ(byte, 'o');  // its own cache: storage's byte, not the other's unwritten one
  EXPECT_FALSE(second->shares_node_table());
  ASSERT_TRUE(first->FlushAll(storage_).ok());
  EXPECT_EQ(std::string(storage_.storage().data() + 3 * kBlock, written.size()), written);
  EXPECT_TRUE(NameExists());
  second.reset();  // it only saw the door: the name is not its to remove
  EXPECT_TRUE(NameExists());
  first.reset();
  EXPECT_FALSE(NameExists());
}

// A prefetch planned before this rank had a table (after a probing read, say) lands once the
// table is made, unless this rank synced in between; and none lands once the file closes.
TEST_F(LazyNodeStoreTest, PrefetchesPlannedBeforeTheTableStillLandUnlessASyncCameBetween) {
  auto store = Mate();
  const uint64_t planned = store->epoch();
  EXPECT_EQ(store->Prefetch(storage_, 0, 0, kBlock, planned), PrefetchResult::kFetched);
  EXPECT_TRUE(store->Contains(0, 0, kBlock));

  auto other = Mate();
  const uint64_t before_sync = other->epoch();
  other->DropClean(storage_);  // a sync: attaches to the table, which holds block 0
  EXPECT_FALSE(store->Contains(0, 0, kBlock));
  EXPECT_EQ(other->Prefetch(storage_, 1, 0, kBlock, before_sync), PrefetchResult::kStale);
  EXPECT_EQ(other->Prefetch(storage_, 1, 0, kBlock, other->epoch()), PrefetchResult::kFetched);

  auto closing = Mate(3);
  const uint64_t queued = closing->epoch();
  closing->Closing();
  EXPECT_EQ(closing->Prefetch(storage_, 2, 0, kBlock, queued), PrefetchResult::kStale);
  EXPECT_FALSE(closing->has_table());
}

}  // namespace
}  // namespace stagio
