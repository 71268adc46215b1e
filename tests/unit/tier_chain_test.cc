// The tier chain and the tiers that need no MPI: the order of a flush and of an invalidation,
// failures, what the block cache forgets for each reason, and when a driver forgets.
// (The remote-owners tier talks to other ranks: the MPI coherence tests cover it.)
#include "tiers/tier_chain.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "cache/block_cache_tier.h"
#include "cache/io_thread.h"
#include "cache/write_back_policy.h"
#include "storage/driver_tier.h"
#include "support/in_memory_block_backend.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

// A tier that logs each call as "<name> flush" or "<name> invalidate", and may fail.
class LoggingTier : public Tier {
 public:
  LoggingTier(std::string name, std::vector<std::string>* log, bool fails = false)
      : name_(std::move(name)), log_(log), fails_(fails) {}
  const char* name() const override { return name_.c_str(); }
  Status Flush(Callers /*callers*/) override { return Note("flush"); }
  Status Invalidate(Callers /*callers*/, Staleness /*why*/) override {
    return Note("invalidate");
  }

 private:
  Status Note(const std::string& what) {
    log_->push_back(name_ + " " + what);
    return fails_ ? Status::IOError(name_ + " failed to " + what) : Status::OK();
  }
  std::string name_;
  std::vector<std::string>* log_;
  bool fails_;
};

TEST(TierChainTest, FlushesTopDownAndInvalidatesBottomUp) {
  std::vector<std::string> log;
  TierChain chain;
  chain.Append(std::make_unique<LoggingTier>("owners", &log));
  chain.Append(std::make_unique<LoggingTier>("cache", &log));
  chain.Append(std::make_unique<LoggingTier>("driver", &log));
  EXPECT_EQ(chain.names(), (std::vector<std::string>{"owners", "cache", "driver"}));

  EXPECT_TRUE(chain.Flush(Callers::kEveryRank).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"owners flush", "cache flush", "driver flush"}));
  log.clear();
  EXPECT_TRUE(chain.Invalidate(Callers::kEveryRank, Staleness::kStorageChanged).ok());
  EXPECT_EQ(log, (std::vector<std::string>{"driver invalidate", "cache invalidate",
                                           "owners invalidate"}));
}

TEST(TierChainTest, AFailureStopsNoOtherTierAndTheFirstIsReturned) {
  std::vector<std::string> log;
  TierChain chain;
  chain.Append(std::make_unique<LoggingTier>("owners", &log, /*fails=*/true));
  chain.Append(std::make_unique<LoggingTier>("cache", &log));
  chain.Append(std::make_unique<LoggingTier>("driver", &log, /*fails=*/true));

  const Status flushed = chain.Flush(Callers::kThisRank);
  EXPECT_FALSE(flushed.ok());
  EXPECT_NE(flushed.message().find("owners failed to flush"), std::string::npos)
      << flushed.ToString();
  EXPECT_EQ(log.size(), 3u) << "every tier is flushed even after a failure";

  const Status invalidated = chain.Invalidate(Callers::kThisRank, Staleness::kPeersWrote);
  EXPECT_NE(invalidated.message().find("driver failed to invalidate"), std::string::npos)
      << invalidated.ToString();
  EXPECT_EQ(log.size(), 6u);
}

TEST(TierChainTest, AnEmptyChainHasNothingToDo) {
  TierChain chain;
  EXPECT_TRUE(chain.Flush(Callers::kThisRankAlone).ok());
  EXPECT_TRUE(chain.Invalidate(Callers::kThisRankAlone, Staleness::kHandleReleased).ok());
  EXPECT_TRUE(chain.names().empty());
}

// ----- BlockCacheTier ----------------------------------------------------------------------

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kFile = 7;

class BlockCacheTierTest : public ::testing::Test {
 protected:
  BlockCacheTierTest()
      : original_(test_support::Pattern(8 * kBlock, 99)),
        backend_(std::make_shared<test_support::InMemoryBlockBackend>(kBlock, original_)),
        cache_(16 * kBlock, kBlock),
        io_thread_(&cache_, WriteBackPolicy(90.0, 50.0)),
        tier_(&cache_, &io_thread_, kFile) {
    cache_.RegisterFile(kFile, backend_, kBlock);
  }
  ~BlockCacheTierTest() override { cache_.UnregisterFile(kFile); }

  void Read(uint64_t index) {
    std::string out(kBlock, '\0');
    ASSERT_TRUE(cache_.Read(kFile, index, 0, kBlock, out.data()).ok());
  }
  void Write(uint64_t index, char value) {
    const std::string bytes(100, value);
    ASSERT_TRUE(cache_.Write(kFile, index, 0, bytes.size(), bytes.data()).ok());
  }
  uint64_t Reads() const { return static_cast<uint64_t>(backend_->read_calls()); }

  std::vector<char> original_;
  std::shared_ptr<test_support::InMemoryBlockBackend> backend_;
  BlockCache cache_;
  IoThread io_thread_;
  BlockCacheTier tier_;
};

TEST_F(BlockCacheTierTest, FlushWritesBackTheDirtyBlocks) {
  Write(2, 'x');
  EXPECT_EQ(backend_->StorageByte(2 * kBlock), original_[2 * kBlock])
      << "a write stays in the cache until it is flushed";
  ASSERT_TRUE(tier_.Flush(Callers::kEveryRank).ok());
  EXPECT_EQ(backend_->StorageByte(2 * kBlock), 'x');
}

TEST_F(BlockCacheTierTest, OtherRanksWritesDropCleanBlocksAndKeepUnwrittenBytes) {
  Read(1);
  backend_->set_fail_writes(true);
  Write(3, 'y');
  EXPECT_FALSE(tier_.Flush(Callers::kEveryRank).ok());
  ASSERT_TRUE(tier_.Invalidate(Callers::kEveryRank, Staleness::kPeersWrote).ok());
  const uint64_t reads = Reads();
  Read(1);
  EXPECT_EQ(Reads(), reads + 1) << "the clean block was dropped: the next read goes to storage";
  // The dirty block stayed, so its bytes are written once storage takes them.
  backend_->set_fail_writes(false);
  ASSERT_TRUE(tier_.Flush(Callers::kEveryRank).ok());
  EXPECT_EQ(backend_->StorageByte(3 * kBlock), 'y');
}

TEST_F(BlockCacheTierTest, StorageChangesDropEveryBlockEvenOnesThatFailedToBeWritten) {
  backend_->set_fail_writes(true);
  Write(3, 'y');
  EXPECT_FALSE(tier_.Flush(Callers::kEveryRank).ok());
  for (Callers callers : {Callers::kEveryRank, Callers::kThisRankAlone}) {
    for (Staleness why : {Staleness::kStorageChanged, Staleness::kHandleReleased}) {
      Write(3, 'y');
      ASSERT_TRUE(tier_.Invalidate(callers, why).ok());
      backend_->set_fail_writes(false);
      ASSERT_TRUE(tier_.Flush(Callers::kEveryRank).ok());
      EXPECT_EQ(backend_->StorageByte(3 * kBlock), original_[3 * kBlock])
          << "the failed bytes were dropped, not written over storage's newer ones";
      backend_->set_fail_writes(true);
    }
  }
}

// A call of one rank (one handed to PMPI) must not drop dirty blocks: in the collective cache
// they may be other ranks' writes, which this rank's owner cache holds for them.
TEST_F(BlockCacheTierTest, ACallOfThisRankAloneNeverDropsDirtyBlocks) {
  Read(1);
  Write(3, 'z');
  ASSERT_TRUE(tier_.Invalidate(Callers::kThisRank, Staleness::kStorageChanged).ok());
  const uint64_t reads = Reads();
  Read(1);
  EXPECT_EQ(Reads(), reads + 1) << "the clean block was dropped";
  ASSERT_TRUE(tier_.Flush(Callers::kThisRank).ok());
  EXPECT_EQ(backend_->StorageByte(3 * kBlock), 'z') << "the dirty block was kept and written";
}

// ----- DriverTier --------------------------------------------------------------------------

// A driver file that counts Flush and Invalidate.
class CountingDriverFile : public DriverFile {
 public:
  Status ReadAt(uint64_t, void*, size_t, size_t* bytes_read) override {
    *bytes_read = 0;
    return Status::OK();
  }
  Status WriteAt(uint64_t, const void*, size_t) override { return Status::OK(); }
  Status GetSize(uint64_t* size) override {
    *size = 0;
    return Status::OK();
  }
  Status Truncate(uint64_t) override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Flush() override {
    ++flushes;
    return Status::OK();
  }
  Status Invalidate() override {
    ++invalidations;
    return Status::IOError("daemon down");
  }
  const std::string& path() const override { return path_; }

  int flushes = 0;
  int invalidations = 0;

 private:
  std::string path_ = "/counted";
};

TEST(DriverTierTest, OnlyStorageThatChangedUnderItMakesTheDriverForget) {
  CountingDriverFile file;
  DriverTier tier(&file);
  EXPECT_TRUE(tier.Flush(Callers::kThisRank).ok());
  EXPECT_EQ(file.flushes, 1);
  EXPECT_TRUE(tier.Invalidate(Callers::kEveryRank, Staleness::kPeersWrote).ok());
  EXPECT_TRUE(tier.Invalidate(Callers::kEveryRank, Staleness::kHandleReleased).ok());
  EXPECT_EQ(file.invalidations, 0) << "the daemons are the blocks' homes: peers wrote there";
  EXPECT_FALSE(tier.Invalidate(Callers::kThisRank, Staleness::kStorageChanged).ok())
      << "the driver's failure is passed on";
  EXPECT_EQ(file.invalidations, 1);
}

}  // namespace
}  // namespace stagio
