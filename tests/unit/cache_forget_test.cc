// What the direct path asks of the block cache (cache/block_cache.h): forgetting a byte range
// before storage gets newer bytes for it from outside the cache, and invalidation that leaves
// no stale byte behind, neither in a block that must stay (dirty, in use) nor in one whose
// fetch was on its way.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "support/in_memory_block_backend.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

using test_support::Background;
using test_support::InMemoryBlockBackend;
using test_support::Pattern;
using test_support::Str;

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kFile = 1;
// How long a test gives a thread to do (wrongly) what it must not; correct code never waits it
// out in vain, a broken one is caught unless the machine is very slow.
constexpr std::chrono::milliseconds kMisbehaviourWindow(200);

class CacheForgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = Pattern(8 * kBlock, 4242);
    backend_ = std::make_shared<InMemoryBlockBackend>(kBlock, original_);
    cache_ = std::make_unique<BlockCache>(8 * kBlock, kBlock);
    cache_->RegisterFile(kFile, backend_, kBlock);
  }
  void TearDown() override { EXPECT_FALSE(backend_->gate_timed_out()); }

  std::string Read(uint64_t index, uint64_t offset, uint64_t length) {
    std::string out(length, '\0');
    EXPECT_TRUE(cache_->Read(kFile, index, offset, length, out.data()).ok());
    return out;
  }
  void Write(uint64_t index, uint64_t offset, const std::string& bytes) {
    EXPECT_TRUE(cache_->Write(kFile, index, offset, bytes.size(), bytes.data()).ok());
  }
  // What the direct path does: newer bytes reach storage from outside the cache.
  void WriteAroundTheCache(uint64_t file_offset, const std::string& bytes) {
    ASSERT_TRUE(backend_->WriteRange(file_offset / kBlock, file_offset % kBlock, bytes.data(),
                                     bytes.size())
                    .ok());
  }

  std::vector<char> original_;
  std::shared_ptr<InMemoryBlockBackend> backend_;
  std::unique_ptr<BlockCache> cache_;
};

TEST_F(CacheForgetTest, ForgottenDirtyBytesNeverOverwriteNewerStorage) {
  Write(0, 0, std::string(10, 'o'));
  ASSERT_TRUE(cache_->ForgetBytes(kFile, 0, 10).ok());
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
  WriteAroundTheCache(0, std::string(10, 'n'));
  ASSERT_TRUE(cache_->FlushFile(kFile).ok());
  EXPECT_EQ(backend_->write_calls(), 1) << "a forgotten dirty byte was written back";
  EXPECT_EQ(backend_->StorageBytes(0, 10), std::string(10, 'n'));
  EXPECT_EQ(Read(0, 0, 10), std::string(10, 'n'));
}

TEST_F(CacheForgetTest, DirtyBytesAroundTheForgottenRangeStay) {
  Write(1, 0, std::string(30, 'a'));
  ASSERT_TRUE(cache_->ForgetBytes(kFile, kBlock + 10, 10).ok());
  ASSERT_TRUE(cache_->FlushFile(kFile).ok());
  EXPECT_EQ(backend_->StorageBytes(kBlock, 10), std::string(10, 'a'));
  EXPECT_EQ(backend_->StorageBytes(kBlock + 10, 10), Str(original_, kBlock + 10, 10));
  EXPECT_EQ(backend_->StorageBytes(kBlock + 20, 10), std::string(10, 'a'));
}

TEST_F(CacheForgetTest, ARangeAcrossBlocksIsForgottenInEach) {
  Write(2, kBlock - 5, std::string(5, 'x'));
  Write(3, 0, std::string(5, 'x'));
  ASSERT_TRUE(cache_->ForgetBytes(kFile, 3 * kBlock - 5, 10).ok());
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
  ASSERT_TRUE(cache_->FlushFile(kFile).ok());
  EXPECT_EQ(backend_->write_calls(), 0);
}

TEST_F(CacheForgetTest, ForgettingWaitsForAWriteBackCarryingTheBytes) {
  Write(0, 0, std::string(10, 'o'));
  backend_->HoldNextWrite();
  Background flush([&] { EXPECT_TRUE(cache_->FlushFile(kFile).ok()); },
                   [&] { backend_->ReleaseWrite(); });
  ASSERT_TRUE(backend_->WaitWriteHeld());
  // The old bytes are on their way to storage: forgetting must wait until they land, or the
  // direct write that follows it could land first and be overwritten.
  std::atomic<bool> forgotten{false};
  Background forget([&] {
    EXPECT_TRUE(cache_->ForgetBytes(kFile, 0, 10).ok());
    forgotten = true;
  }, nullptr);
  std::this_thread::sleep_for(kMisbehaviourWindow);
  EXPECT_FALSE(forgotten.load()) << "forgot while a write-back of the bytes was on its way";
  backend_->ReleaseWrite();
  flush.Join();
  forget.Join();
  EXPECT_TRUE(forgotten.load());
}

TEST_F(CacheForgetTest, AFetchOnItsWayWhenTheFileIsInvalidatedKeepsNothing) {
  // The fetch is held on its way while the file is invalidated: whatever it read may predate
  // a change the invalidation stands for, so it may serve its own read but no later one.
  backend_->HoldNextRead();
  Background reader([&] { Read(4, 0, 10); }, [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld());
  cache_->DropCleanBlocks(kFile);
  backend_->ReleaseRead();
  reader.Join();
  EXPECT_EQ(backend_->read_calls(), 1);
  EXPECT_EQ(Read(4, 0, 10), Str(original_, 4 * kBlock, 10));
  EXPECT_EQ(backend_->read_calls(), 2) << "a later read was served by the stale fetch";
}

TEST_F(CacheForgetTest, AFetchOnItsWayWhenItsBytesAreForgottenKeepsNothing) {
  backend_->HoldNextRead();
  Background reader([&] { Read(5, 0, 10); }, [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld());
  ASSERT_TRUE(cache_->ForgetBytes(kFile, 5 * kBlock, 10).ok());
  backend_->ReleaseRead();
  reader.Join();
  EXPECT_EQ(Read(5, 0, 10), Str(original_, 5 * kBlock, 10));
  EXPECT_EQ(backend_->read_calls(), 2) << "a later read was served by the stale fetch";
}

TEST_F(CacheForgetTest, InvalidationMakesADirtyBlockForgetItsCleanBytes) {
  EXPECT_EQ(Read(6, 0, kBlock), Str(original_, 6 * kBlock, kBlock));
  Write(6, 0, "dirty");
  WriteAroundTheCache(6 * kBlock + 100, std::string(10, 'n'));
  cache_->DropCleanBlocks(kFile);
  EXPECT_EQ(Read(6, 100, 10), std::string(10, 'n')) << "a clean byte of a dirty block was stale";
  EXPECT_EQ(Read(6, 0, 5), "dirty");
  ASSERT_TRUE(cache_->FlushFile(kFile).ok());
  EXPECT_EQ(backend_->StorageBytes(6 * kBlock, 5), "dirty");
}

}  // namespace
}  // namespace stagio
