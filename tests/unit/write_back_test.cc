#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cache/block_cache.h"
#include "cache/write_back_policy.h"
#include "cache/io_thread.h"
#include "support/in_memory_block_backend.h"

namespace stagio {
namespace {

// ----- WriteBackPolicy ---------------------------------------------------------------------

TEST(WriteBackPolicyTest, ZeroPercentFlushesAnyDirtyByte) {
  WriteBackPolicy policy(0.0, 0.0);
  const uint64_t capacity = 1 << 20;
  EXPECT_FALSE(policy.ShouldStart(0, capacity));
  EXPECT_TRUE(policy.ShouldStart(1, capacity));
  EXPECT_FALSE(policy.ShouldContinue(0, capacity));
  EXPECT_TRUE(policy.ShouldContinue(1, capacity));
  EXPECT_EQ(policy.LowMarkBytes(capacity), 0u);
}

TEST(WriteBackPolicyTest, SixPointTwoFivePercent) {
  WriteBackPolicy policy(6.25, 3.125);
  const uint64_t capacity = uint64_t{16} << 20;  // 16 MiB: high mark 1 MiB, low mark 512 KiB
  EXPECT_DOUBLE_EQ(policy.high_percent(), 6.25);
  EXPECT_DOUBLE_EQ(policy.low_percent(), 3.125);
  EXPECT_FALSE(policy.ShouldStart(0, capacity));
  EXPECT_FALSE(policy.ShouldStart((1 << 20) - 1, capacity));
  EXPECT_TRUE(policy.ShouldStart(1 << 20, capacity));  // reaching the mark starts it
  EXPECT_EQ(policy.LowMarkBytes(capacity), uint64_t{512} << 10);
  EXPECT_FALSE(policy.ShouldContinue(512 << 10, capacity));
  EXPECT_TRUE(policy.ShouldContinue((512 << 10) + 1, capacity));
  // Between the marks: do not start, but once started, continue (hysteresis).
  EXPECT_FALSE(policy.ShouldStart(768 << 10, capacity));
  EXPECT_TRUE(policy.ShouldContinue(768 << 10, capacity));
  // A capacity that does not divide evenly rounds the mark down.
  EXPECT_EQ(policy.LowMarkBytes(100), 3u);   // 3.125
  EXPECT_FALSE(policy.ShouldStart(5, 100));  // 6.25 -> 6
  EXPECT_TRUE(policy.ShouldStart(6, 100));
}

TEST(WriteBackPolicyTest, HundredPercentStartsWhenTheCacheIsFull) {
  WriteBackPolicy policy(100.0, 100.0);
  const uint64_t capacity = 1 << 20;
  EXPECT_FALSE(policy.ShouldStart(capacity - 1, capacity));
  EXPECT_TRUE(policy.ShouldStart(capacity, capacity));
  EXPECT_TRUE(policy.ShouldStart(capacity + 1, capacity));
  EXPECT_EQ(policy.LowMarkBytes(capacity), capacity);
  EXPECT_FALSE(policy.ShouldContinue(capacity, capacity));
}

TEST(WriteBackPolicyTest, ClampsPercentages) {
  WriteBackPolicy over(150.0, 120.0);
  EXPECT_DOUBLE_EQ(over.high_percent(), 100.0);
  EXPECT_DOUBLE_EQ(over.low_percent(), 100.0);
  EXPECT_FALSE(over.ShouldStart(999, 1000));
  EXPECT_TRUE(over.ShouldStart(1000, 1000));

  WriteBackPolicy low_above_high(25.0, 50.0);
  EXPECT_DOUBLE_EQ(low_above_high.high_percent(), 25.0);
  EXPECT_DOUBLE_EQ(low_above_high.low_percent(), 25.0);
  EXPECT_EQ(low_above_high.LowMarkBytes(1000), 250u);

  WriteBackPolicy negative(-5.0, -1.0);
  EXPECT_DOUBLE_EQ(negative.high_percent(), 0.0);
  EXPECT_DOUBLE_EQ(negative.low_percent(), 0.0);
  EXPECT_TRUE(negative.ShouldStart(1, 1000));
  EXPECT_EQ(negative.LowMarkBytes(1000), 0u);
}

TEST(WriteBackPolicyTest, ZeroCapacity) {
  WriteBackPolicy policy(6.25, 3.125);
  EXPECT_FALSE(policy.ShouldStart(0, 0));
  EXPECT_TRUE(policy.ShouldStart(1, 0));
  EXPECT_EQ(policy.LowMarkBytes(0), 0u);
}

// ----- IoThread: write-back -----------------------------------------------------------------

// The shared in-memory backend, logging the index of each block WriteRange stored.
class RecordingBackend : public test_support::InMemoryBlockBackend {
 public:
  explicit RecordingBackend(uint64_t block_size) : InMemoryBlockBackend(block_size) {}

  std::vector<uint64_t> written_blocks() {
    std::lock_guard<std::mutex> lock(mutex_);
    return written_blocks_;
  }

 private:
  void OnWritten(uint64_t index, uint64_t offset, uint64_t length) override {
    written_blocks_.push_back(index);
  }

  std::vector<uint64_t> written_blocks_;
};

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kCapacityBlocks = 16;
constexpr uint64_t kFile = 1;

class IoThreadWriteBackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = std::make_shared<RecordingBackend>(kBlock);
    cache_ = std::make_unique<BlockCache>(kCapacityBlocks * kBlock, kBlock);
    cache_->RegisterFile(kFile, backend_, kBlock);
  }
  void TearDown() override { EXPECT_FALSE(backend_->gate_timed_out()); }

  void Dirty(uint64_t index, char value) {
    const std::string data(32, value);
    Status status = cache_->Write(kFile, index, 64, data.size(), data.data());
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  std::shared_ptr<RecordingBackend> backend_;
  std::unique_ptr<BlockCache> cache_;
};

// Write-back starts blocks least recently modified first, BlockCache::kWriteBackStreams at
// once, so each write is of one of the kWriteBackStreams oldest blocks not written yet.
void ExpectOldestFirst(const std::vector<uint64_t>& written,
                       std::vector<uint64_t> modification_order) {
  for (size_t at = 0; at < written.size(); ++at) {
    const auto it = std::find(modification_order.begin(), modification_order.end(), written[at]);
    ASSERT_NE(it, modification_order.end()) << "block " << written[at] << " written twice";
    EXPECT_LT(static_cast<size_t>(it - modification_order.begin()),
              BlockCache::kWriteBackStreams)
        << "write " << at << " (block " << written[at] << ") passed older blocks";
    modification_order.erase(it);
  }
}

TEST_F(IoThreadWriteBackTest, AboveHighMarkFlushesDownToLowMark) {
  IoThread thread(cache_.get(), WriteBackPolicy(75.0, 0.0));  // high mark: 12 blocks
  // Modified in an order unlike the blocks' own, more of them than write-backs in flight.
  const std::vector<uint64_t> order = {20, 13, 11, 22, 10, 15, 14, 21, 12, 23, 16, 17, 18};
  for (size_t i = 0; i < order.size(); ++i) Dirty(order[i], static_cast<char>('a' + i));
  ASSERT_EQ(cache_->dirty_bytes(), order.size() * kBlock);
  thread.Notify();
  thread.WaitIdle();
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
  const std::vector<uint64_t> written = backend_->written_blocks();
  EXPECT_EQ(std::multiset<uint64_t>(written.begin(), written.end()),
            std::multiset<uint64_t>(order.begin(), order.end()));
  ExpectOldestFirst(written, order);
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(backend_->StorageByte(order[i] * kBlock + 64), static_cast<char>('a' + i));
  }
}

TEST_F(IoThreadWriteBackTest, StopsAtTheLowMarkOldestFirst) {
  IoThread thread(cache_.get(), WriteBackPolicy(25.0, 12.5));  // 4 blocks, 2 blocks
  const std::vector<uint64_t> order = {7, 2, 9, 0, 5};
  for (uint64_t index : order) Dirty(index, 'x');
  thread.Notify();
  thread.WaitIdle();
  EXPECT_EQ(cache_->dirty_bytes(), 2 * kBlock);
  // The three oldest, and not a block more, though the streams could start five at once.
  const std::vector<uint64_t> written = backend_->written_blocks();
  EXPECT_EQ(std::multiset<uint64_t>(written.begin(), written.end()),
            (std::multiset<uint64_t>{7, 2, 9}));
}

TEST_F(IoThreadWriteBackTest, QuietPeriodWritesEverythingBackBelowTheHighMark) {
  // Below the high mark, only the quiet period can start a write-back. WaitIdle returns once
  // the quiet-period flush has run, however long the machine takes to get there.
  IoThread thread(cache_.get(), WriteBackPolicy(25.0, 0.0, /*quiet_ms=*/1.0));
  for (uint64_t i = 0; i < 3; ++i) Dirty(i, 'q');
  thread.Notify();
  thread.WaitIdle();
  EXPECT_EQ(backend_->written_blocks().size(), 3u);
  EXPECT_EQ(cache_->dirty_bytes(), 0u);

  // The next write starts a new period.
  Dirty(5, 'r');
  thread.Notify();
  thread.WaitIdle();
  EXPECT_EQ(backend_->written_blocks().size(), 4u);
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
}

TEST_F(IoThreadWriteBackTest, BelowHighMarkWritesNothing) {
  IoThread thread(cache_.get(), WriteBackPolicy(25.0, 0.0));
  for (uint64_t i = 0; i < 3; ++i) Dirty(i, 'y');  // one block short of the 4-block mark
  thread.Notify();
  thread.WaitIdle();
  EXPECT_TRUE(backend_->written_blocks().empty());
  EXPECT_EQ(cache_->dirty_bytes(), 3 * kBlock);

  // One more block reaches the mark.
  Dirty(3, 'y');
  thread.Notify();
  thread.WaitIdle();
  EXPECT_EQ(backend_->written_blocks().size(), 4u);
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
}

TEST_F(IoThreadWriteBackTest, SetPolicyAppliesToLaterNotifies) {
  IoThread thread(cache_.get(), WriteBackPolicy(100.0, 100.0));
  Dirty(0, 'p');
  thread.Notify();
  thread.WaitIdle();
  EXPECT_TRUE(backend_->written_blocks().empty());
  thread.SetPolicy(WriteBackPolicy(0.0, 0.0));
  thread.Notify();
  thread.WaitIdle();
  EXPECT_EQ(backend_->written_blocks(), (std::vector<uint64_t>{0}));
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
}

TEST_F(IoThreadWriteBackTest, FailedPassRecordsErrorAndKeepsData) {
  IoThread thread(cache_.get(), WriteBackPolicy(0.0, 0.0));
  Dirty(3, 'e');
  backend_->set_fail_writes(true);
  thread.Notify();
  thread.WaitIdle();
  EXPECT_EQ(backend_->error_count(), 1u);
  EXPECT_EQ(cache_->dirty_bytes(), kBlock);
  backend_->set_fail_writes(false);
  thread.Notify();  // the next Notify starts another pass
  thread.WaitIdle();
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
  EXPECT_EQ(backend_->StorageByte(3 * kBlock + 64), 'e');
}

TEST_F(IoThreadWriteBackTest, DestructorJoinsWhenIdle) {
  {
    IoThread thread(cache_.get(), WriteBackPolicy(6.25, 3.125));
  }
  {
    IoThread thread(cache_.get(), WriteBackPolicy(0.0, 0.0));
    thread.WaitIdle();  // nothing requested: returns at once
  }
  SUCCEED();
}

TEST_F(IoThreadWriteBackTest, DestructorRightAfterNotifyJoins) {
  for (int round = 0; round < 20; ++round) {
    Dirty(round % 8, 'r');
    IoThread thread(cache_.get(), WriteBackPolicy(0.0, 0.0));
    thread.Notify();
    // Destroyed at once: the pass may or may not have run, but the join must complete and the
    // cache must be left consistent.
  }
  ASSERT_TRUE(cache_->FlushAll().ok());
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
}

TEST_F(IoThreadWriteBackTest, DestructorWaitsForRunningPass) {
  Dirty(6, 'w');
  auto thread = std::make_unique<IoThread>(cache_.get(), WriteBackPolicy(0.0, 0.0));
  backend_->HoldNextWrite();
  thread->Notify();
  const bool held = backend_->WaitWriteHeld();
  if (!held) backend_->ReleaseWrite();
  ASSERT_TRUE(held) << "the write-back pass never reached WriteRange";
  // Destroy while the pass is inside WriteRange; release the write from here.
  std::thread destroyer([&thread] { thread.reset(); });
  backend_->ReleaseWrite();
  destroyer.join();
  EXPECT_EQ(thread, nullptr);
  // The pass that was running completed before the thread went away.
  EXPECT_EQ(backend_->written_blocks(), (std::vector<uint64_t>{6}));
  EXPECT_EQ(cache_->dirty_bytes(), 0u);
}

}  // namespace
}  // namespace stagio
