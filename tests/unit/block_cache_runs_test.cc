// BlockCache's run fetches: FetchBlocks (a demand, for collective reads) and PrefetchBlocks
// (the I/O thread): one storage request per run of blocks that are neither cached nor on their
// way, the shard-by-shard claim and landing around it, and the counters and outcomes.
#include "cache/block_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "support/prefetch_cache_fixture.h"
#include "support/prefetch_printers.h"
#include "support/read_logging_backend.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

using Outcomes = std::vector<PrefetchOutcome>;
using Reads = std::vector<test_support::ReadLoggingBackend::ReadRecord>;
using test_support::Background;
using test_support::Str;

// How long a test gives another thread to do something it must not do. Correct code passes
// whatever this is; a longer window only makes a buggy interleaving likelier to show.
constexpr std::chrono::milliseconds kMisbehaviourWindow(200);

class BlockCacheRunsTest : public test_support::PrefetchCacheFixture {
 protected:
  PrefetchResult PrefetchRun(uint64_t first, uint64_t count) {
    return cache_->PrefetchBlocks(kFile, first, count, Epoch());
  }
  // A storage request for blocks [first, first + count).
  static test_support::ReadLoggingBackend::ReadRecord Run(uint64_t first, uint64_t count) {
    return {first, 0, count * kBlock};
  }
  // Every block of [first, first + count) is cached, and reads back as storage holds it
  // without another storage request.
  void ExpectCachedAsStored(uint64_t first, uint64_t count) {
    const int reads = backend_->read_calls();
    for (uint64_t index = first; index < first + count; ++index) {
      EXPECT_TRUE(cache_->Contains(kFile, index)) << "block " << index;
      EXPECT_EQ(ReadString(index, 0, kBlock), Str(original_, index * kBlock, kBlock))
          << "block " << index;
    }
    EXPECT_EQ(backend_->read_calls(), reads) << "a fetched block was read from storage again";
  }
  // No prefetch was used, wasted or late, and no outcome reached the backend: what a prefetch
  // that cached nothing leaves behind.
  void ExpectNoPrefetchAccounted() {
    EXPECT_EQ(Stat(Counter::prefetch_used), 0u);
    EXPECT_EQ(Stat(Counter::prefetch_wasted), 0u);
    EXPECT_EQ(Stat(Counter::prefetch_late), 0u);
    EXPECT_TRUE(backend_->outcomes().empty());
  }
};

// ----- FetchBlocks -------------------------------------------------------------------------

TEST_F(BlockCacheRunsTest, FetchBlocksReadsARunAcrossShardsWithOneStorageRequest) {
  Init(64 * kBlock, 64 * kBlock);  // 4 shards: consecutive blocks land in different ones
  ASSERT_OK(cache_->FetchBlocks(kFile, 3, 12));
  EXPECT_EQ(backend_->reads(), (Reads{Run(3, 12)}));
  EXPECT_EQ(Stat(Counter::storage_reads), 1u);
  EXPECT_EQ(Stat(Counter::storage_read_bytes), 12 * kBlock);
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u);
  EXPECT_EQ(Stat(Counter::cache_misses), 12u);
  EXPECT_EQ(Stat(Counter::cache_hits), 0u);
  EXPECT_EQ(cache_->block_count(), 12u);
  ExpectCachedAsStored(3, 12);
  EXPECT_EQ(Stat(Counter::prefetch_issued), 0u);
  EXPECT_TRUE(backend_->outcomes().empty()) << "a demand fetch is no prefetch";

  // Everything is cached now: nothing to read.
  ASSERT_OK(cache_->FetchBlocks(kFile, 3, 12));
  EXPECT_EQ(backend_->read_calls(), 1);
  EXPECT_EQ(Stat(Counter::cache_misses), 12u);
  ASSERT_OK(cache_->FetchBlocks(kFile, 7, 0));
  EXPECT_EQ(backend_->read_calls(), 1);
}

TEST_F(BlockCacheRunsTest, CachedAndInFlightBlocksSplitTheRunsAndAreWaitedFor) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(3, 0, 10);  // cached
  // Block 6 is being prefetched, held inside the backend.
  backend_->HoldNextRead();
  PrefetchResult prefetched = PrefetchResult::kFailed;
  Background prefetcher([&] { prefetched = Prefetch(6); }, [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the prefetch never reached ReadRange";

  std::atomic<bool> fetched{false};
  Status status;
  Background fetcher(
      [&] {
        status = cache_->FetchBlocks(kFile, 1, 8);
        fetched = true;
      },
      [&] { backend_->ReleaseRead(); });
  // Its own runs, [1, 3), [4, 6) and [7, 9), go out while block 6 is still on its way...
  ASSERT_TRUE(backend_->WaitReadCalls(5, test_support::kGateWaitLimit));
  // ...and it waits for block 6 instead of reading it again.
  EXPECT_FALSE(backend_->WaitReadCalls(6, kMisbehaviourWindow)) << "block 6 was read twice";
  EXPECT_FALSE(fetched) << "FetchBlocks returned before the block on its way had arrived";
  backend_->ReleaseRead();
  fetcher.Join();
  prefetcher.Join();

  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(prefetched, PrefetchResult::kFetched);
  EXPECT_EQ(backend_->reads(),
            (Reads{Run(3, 1), Run(6, 1), Run(1, 2), Run(4, 2), Run(7, 2)}));
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u + 3u);  // the first read's, then the runs
  EXPECT_EQ(Stat(Counter::cache_misses), 1u + 6u);
  // The collective read came while the prefetched block was on its way: used, late.
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedAfterWait});
  EXPECT_EQ(Stat(Counter::prefetch_used), 1u);
  EXPECT_EQ(Stat(Counter::prefetch_late), 1u);
  ExpectCachedAsStored(1, 8);
  EXPECT_EQ(backend_->outcomes().size(), 1u) << "reading the waited-for block used it again";
}

TEST_F(BlockCacheRunsTest, CachedPrefetchedBlockIsLeftForTheReadToUse) {
  Init(16 * kBlock, 16 * kBlock);
  EXPECT_EQ(Prefetch(2), PrefetchResult::kFetched);
  ASSERT_OK(cache_->FetchBlocks(kFile, 0, 4));
  EXPECT_EQ(backend_->reads(), (Reads{Run(2, 1), Run(0, 2), Run(3, 1)}));
  EXPECT_TRUE(backend_->outcomes().empty()) << "FetchBlocks is not the read that uses it";
  ReadString(2, 0, 100);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedInTime});
}

TEST_F(BlockCacheRunsTest, WritesDuringARunFetchAreNotOverwrittenByTheFetchedData) {
  Init(16 * kBlock, 16 * kBlock);
  WriteString(4, 0, "before");  // partly valid: fetched with the run, the written bytes kept
  backend_->HoldNextRead();
  Status status;
  Background fetcher([&] { status = cache_->FetchBlocks(kFile, 2, 4); },
                     [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the fetch never reached ReadRange";
  WriteString(2, 100, "during-2");
  WriteString(5, 4000, "during-5");
  backend_->ReleaseRead();
  fetcher.Join();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(backend_->reads(), (Reads{Run(2, 4)}));

  auto expected = [&](uint64_t index, uint64_t offset, const std::string& written) {
    std::string block = Str(original_, index * kBlock, kBlock);
    return block.replace(offset, written.size(), written);
  };
  EXPECT_EQ(ReadString(2, 0, kBlock), expected(2, 100, "during-2"));
  EXPECT_EQ(ReadString(3, 0, kBlock), Str(original_, 3 * kBlock, kBlock));
  EXPECT_EQ(ReadString(4, 0, kBlock), expected(4, 0, "before"));
  EXPECT_EQ(ReadString(5, 0, kBlock), expected(5, 4000, "during-5"));
  EXPECT_EQ(backend_->read_calls(), 1);
  ASSERT_OK(cache_->FlushFile(kFile));
  EXPECT_EQ(backend_->StorageBytes(2 * kBlock + 100, 8), "during-2");
  EXPECT_EQ(backend_->StorageBytes(5 * kBlock + 4000, 8), "during-5");
}

TEST_F(BlockCacheRunsTest, BlocksPastTheEndOfFileReadAsZeros) {
  Init(16 * kBlock, 2 * kBlock + kBlock / 2);
  ASSERT_OK(cache_->FetchBlocks(kFile, 1, 3));
  EXPECT_EQ(backend_->reads(), (Reads{Run(1, 3)}));
  EXPECT_EQ(Stat(Counter::storage_read_bytes), kBlock + kBlock / 2);
  EXPECT_EQ(ReadString(1, 0, kBlock), Str(original_, kBlock, kBlock));
  EXPECT_EQ(ReadString(2, 0, kBlock / 2), Str(original_, 2 * kBlock, kBlock / 2));
  EXPECT_EQ(ReadString(2, kBlock / 2, kBlock / 2), std::string(kBlock / 2, '\0'));
  EXPECT_EQ(ReadString(3, 0, kBlock), std::string(kBlock, '\0'));
  EXPECT_EQ(backend_->read_calls(), 1);

  EXPECT_EQ(PrefetchRun(4, 2), PrefetchResult::kFetched);
  EXPECT_EQ(ReadString(5, 0, kBlock), std::string(kBlock, '\0'));
  EXPECT_EQ(backend_->read_calls(), 2);
}

TEST_F(BlockCacheRunsTest, FailedFetchLeavesItsBlocksInvalidAndReadsNoFurtherRun) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(3, 0, 10);
  WriteString(1, 0, "kept");
  backend_->set_fail_reads(true);
  const Status status = cache_->FetchBlocks(kFile, 0, 6);
  EXPECT_EQ(status.code(), Status::Code::kIOError) << status.ToString();
  EXPECT_EQ(backend_->reads(), (Reads{Run(3, 1), Run(0, 3)})) << "runs after the failed one";
  for (uint64_t index : {0, 1, 2, 4, 5}) {
    EXPECT_FALSE(cache_->Contains(kFile, index)) << "block " << index;
  }
  EXPECT_EQ(cache_->block_count(), 2u) << "only the cached block and the written one are left";
  EXPECT_EQ(Stat(Counter::cache_misses), 1u + 5u);
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u + 1u);

  backend_->set_fail_reads(false);
  EXPECT_EQ(ReadString(1, 0, 4), "kept");
  EXPECT_EQ(ReadString(1, 4, 100), Str(original_, kBlock + 4, 100));
  ASSERT_OK(cache_->FetchBlocks(kFile, 0, 6));
  EXPECT_EQ(backend_->reads().back(), Run(4, 2));
  EXPECT_EQ(cache_->FetchBlocks(7, 0, 1).code(), Status::Code::kInvalidArgument)
      << "a file the cache does not know";
}

TEST_F(BlockCacheRunsTest, DemandRunLargerThanTheCacheStaysWithinCapacity) {
  Init(4 * kBlock, 16 * kBlock);
  ASSERT_OK(cache_->FetchBlocks(kFile, 0, 6));
  EXPECT_EQ(backend_->reads(), (Reads{Run(0, 6)}));
  EXPECT_LE(cache_->charged_bytes(), 4 * kBlock);
  EXPECT_EQ(Stat(Counter::cache_evictions), 2u);
  // An evicted block is fetched again by the read that needs it.
  EXPECT_EQ(ReadString(0, 0, kBlock), Str(original_, 0, kBlock));
  EXPECT_LE(cache_->charged_bytes(), 4 * kBlock);
}

// ----- PrefetchBlocks ----------------------------------------------------------------------

TEST_F(BlockCacheRunsTest, PrefetchedRunIsUnusedUntilReadAndWastedIfDropped) {
  Init(16 * kBlock, 16 * kBlock);
  EXPECT_EQ(PrefetchRun(2, 4), PrefetchResult::kFetched);
  EXPECT_EQ(backend_->reads(), (Reads{Run(2, 4)}));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 4u);
  EXPECT_EQ(Stat(Counter::demand_fetches), 0u);
  EXPECT_EQ(Stat(Counter::storage_reads), 1u);
  EXPECT_TRUE(backend_->outcomes().empty());

  EXPECT_EQ(ReadString(2, 0, kBlock), Str(original_, 2 * kBlock, kBlock));
  EXPECT_EQ(ReadString(4, 10, 10), Str(original_, 4 * kBlock + 10, 10));
  EXPECT_EQ(backend_->read_calls(), 1);
  EXPECT_EQ(Stat(Counter::prefetch_used), 2u);
  EXPECT_EQ(backend_->outcomes(),
            (Outcomes{PrefetchOutcome::kUsedInTime, PrefetchOutcome::kUsedInTime}));

  cache_->DropCleanBlocks(kFile);
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 2u);  // blocks 3 and 5
  EXPECT_EQ(backend_->outcomes().size(), 2u) << "a sync says nothing about the depth";
}

TEST_F(BlockCacheRunsTest, PrefetchRunSkipsCachedAndInFlightBlocksAsOvertaken) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(3, 0, 10);
  backend_->HoldNextRead();
  Status status;
  std::string out(kBlock, '\0');
  Background reader([&] { status = cache_->Read(kFile, 5, 0, kBlock, out.data()); },
                    [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the demand read never reached ReadRange";

  // Without waiting for block 5: the I/O thread never waits for a demand.
  EXPECT_EQ(PrefetchRun(2, 5), PrefetchResult::kFetched);
  EXPECT_EQ(backend_->reads(), (Reads{Run(3, 1), Run(5, 1), Run(2, 1), Run(4, 1), Run(6, 1)}));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 3u);
  EXPECT_EQ(Stat(Counter::prefetch_late), 2u);
  EXPECT_EQ(backend_->outcomes(),
            (Outcomes{PrefetchOutcome::kOvertaken, PrefetchOutcome::kOvertaken}));
  backend_->ReleaseRead();
  reader.Join();
  ASSERT_TRUE(status.ok()) << status.ToString();

  EXPECT_EQ(PrefetchRun(3, 1), PrefetchResult::kAlreadyCached);
  EXPECT_EQ(PrefetchRun(2, 5), PrefetchResult::kAlreadyCached);
  EXPECT_EQ(backend_->read_calls(), 5);
  // Blocks 3 and 5 were read by the application; 2, 4 and 6 were prefetched and not read yet.
  EXPECT_EQ(Stat(Counter::prefetch_late), 2u + 1u + 2u);
}

TEST_F(BlockCacheRunsTest, BlocksAnEarlierPrefetchBroughtAreSkippedUncounted) {
  Init(16 * kBlock, 16 * kBlock);
  EXPECT_EQ(PrefetchRun(0, 4), PrefetchResult::kFetched);
  // An overlapping run queued before the first one ran.
  EXPECT_EQ(PrefetchRun(2, 4), PrefetchResult::kFetched);
  EXPECT_EQ(backend_->reads(), (Reads{Run(0, 4), Run(4, 2)}));
  EXPECT_EQ(PrefetchRun(1, 2), PrefetchResult::kAlreadyCached);
  EXPECT_EQ(backend_->read_calls(), 2);
  EXPECT_EQ(Stat(Counter::prefetch_issued), 6u);
  ExpectNoPrefetchAccounted();
  ReadString(3, 0, 10);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedInTime});
}

TEST_F(BlockCacheRunsTest, PrefetchRunOfOnlyBlocksOnTheirWayIsInFlight) {
  Init(16 * kBlock, 16 * kBlock);
  backend_->HoldNextRead();
  Status status;
  Background fetcher([&] { status = cache_->FetchBlocks(kFile, 0, 2); },
                     [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the demand fetch never reached ReadRange";
  EXPECT_EQ(PrefetchRun(0, 2), PrefetchResult::kInFlight);
  backend_->ReleaseRead();
  fetcher.Join();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(backend_->read_calls(), 1);
  EXPECT_EQ(Stat(Counter::prefetch_issued), 0u);
}

TEST_F(BlockCacheRunsTest, StaleEpochFetchesNothing) {
  Init(16 * kBlock, 16 * kBlock);
  const uint64_t planned = Epoch();
  cache_->DropCleanBlocks(kFile);
  EXPECT_EQ(cache_->PrefetchBlocks(kFile, 0, 4, planned), PrefetchResult::kStale);
  EXPECT_EQ(cache_->PrefetchBlocks(7, 0, 4, planned), PrefetchResult::kStale) << "unknown file";
  EXPECT_EQ(backend_->read_calls(), 0);
  EXPECT_EQ(cache_->block_count(), 0u);
  EXPECT_EQ(Stat(Counter::prefetch_issued), 0u);
  ExpectNoPrefetchAccounted();
}

TEST_F(BlockCacheRunsTest, InvalidationDuringARunPrefetchDropsItAndStopsTheNextRuns) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(2, 0, 10);
  const int reads_before = backend_->read_calls();
  backend_->HoldNextRead();
  PrefetchResult result = PrefetchResult::kFailed;
  Background prefetcher([&] { result = PrefetchRun(0, 5); }, [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the prefetch never reached ReadRange";
  cache_->DropCleanBlocks(kFile);  // a sync while the first run is on its way
  backend_->ReleaseRead();
  prefetcher.Join();

  EXPECT_EQ(result, PrefetchResult::kStale);
  EXPECT_EQ(backend_->reads().back(), Run(0, 2)) << "the run after the sync was read";
  EXPECT_EQ(backend_->read_calls(), reads_before + 1);
  EXPECT_EQ(cache_->block_count(), 0u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kOvertaken})
      << "block 2 only: a stale prefetch is neither used nor wasted";
}

TEST_F(BlockCacheRunsTest, FailedPrefetchRunCachesNothing) {
  Init(16 * kBlock, 16 * kBlock);
  backend_->set_fail_reads(true);
  EXPECT_EQ(PrefetchRun(1, 3), PrefetchResult::kFailed);
  EXPECT_EQ(cache_->block_count(), 0u);
  EXPECT_EQ(cache_->charged_bytes(), 0u);
  EXPECT_EQ(Stat(Counter::storage_reads), 0u);
  backend_->set_fail_reads(false);
  EXPECT_EQ(ReadString(2, 0, 16), Str(original_, 2 * kBlock, 16));
  ExpectNoPrefetchAccounted();
}

TEST_F(BlockCacheRunsTest, PrefetchRunEvictsUsedBlocksBeforeItsOwn) {
  Init(4 * kBlock, 16 * kBlock);
  ReadString(10, 0, 10);
  ReadString(11, 0, 10);
  EXPECT_EQ(PrefetchRun(0, 4), PrefetchResult::kFetched);
  for (uint64_t index = 0; index < 4; ++index) {
    EXPECT_TRUE(cache_->Contains(kFile, index)) << "block " << index;
  }
  EXPECT_FALSE(cache_->Contains(kFile, 10));
  EXPECT_FALSE(cache_->Contains(kFile, 11));
  EXPECT_EQ(Stat(Counter::cache_evictions), 2u);
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 0u);
  EXPECT_LE(cache_->charged_bytes(), 4 * kBlock);
}

}  // namespace
// ----- PrefetchBytes: the exact bytes a pre-execution helper announced ------------------------

TEST_F(BlockCacheRunsTest, PrefetchBytesFetchesOnlyTheBytesAcrossBlocksInOneRequest) {
  Init(16 * kBlock, 16 * kBlock);
  // From the middle of block 2 to the middle of block 4.
  const uint64_t offset = 2 * kBlock + 1000;
  const uint64_t length = 2 * kBlock + 500;
  EXPECT_EQ(cache_->PrefetchBytes(kFile, offset, length, Epoch()), PrefetchResult::kFetched);
  EXPECT_EQ(backend_->reads(), (Reads{{2, 1000, length}}));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 3u);
  // Reads inside the fetched bytes hit...
  EXPECT_EQ(ReadString(2, 1000, kBlock - 1000), Str(original_, offset, kBlock - 1000));
  EXPECT_EQ(ReadString(3, 0, kBlock), Str(original_, 3 * kBlock, kBlock));
  EXPECT_EQ(ReadString(4, 0, 1500), Str(original_, 4 * kBlock, 1500));
  EXPECT_EQ(backend_->read_calls(), 1);
  EXPECT_EQ(Stat(Counter::prefetch_used), 3u);
  // ... and a read of bytes it did not fetch goes to storage for them.
  EXPECT_EQ(ReadString(2, 0, 1000), Str(original_, 2 * kBlock, 1000));
  EXPECT_EQ(backend_->read_calls(), 2);
}

TEST_F(BlockCacheRunsTest, PrefetchBytesAlreadyCachedFetchesNothing) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(5, 0, kBlock);
  const int reads = backend_->read_calls();
  EXPECT_EQ(cache_->PrefetchBytes(kFile, 5 * kBlock + 10, 100, Epoch()),
            PrefetchResult::kAlreadyCached);
  EXPECT_EQ(backend_->read_calls(), reads);
  EXPECT_TRUE(cache_->Announce(kFile, 5, 10, 110));
}

TEST_F(BlockCacheRunsTest, PrefetchBytesSplitsAroundACachedBlock) {
  Init(16 * kBlock, 16 * kBlock);
  ReadString(3, 0, kBlock);
  EXPECT_EQ(cache_->PrefetchBytes(kFile, 2 * kBlock + 100, 2 * kBlock + 200, Epoch()),
            PrefetchResult::kFetched);
  EXPECT_EQ(backend_->reads(), (Reads{Run(3, 1), {2, 100, kBlock - 100}, {4, 0, 300}}));
}

TEST_F(BlockCacheRunsTest, PrefetchBytesNeverOverwritesWrittenBytes) {
  Init(16 * kBlock, 16 * kBlock);
  WriteString(6, 50, "written");
  EXPECT_EQ(cache_->PrefetchBytes(kFile, 6 * kBlock, 200, Epoch()), PrefetchResult::kFetched);
  std::string expected = Str(original_, 6 * kBlock, 200);
  expected.replace(50, 7, "written");
  EXPECT_EQ(ReadString(6, 0, 200), expected);
}

TEST_F(BlockCacheRunsTest, PrefetchBytesWithAStaleEpochFetchesNothing) {
  Init(16 * kBlock, 16 * kBlock);
  const uint64_t epoch = Epoch();
  cache_->DropCleanBlocks(kFile);
  EXPECT_EQ(cache_->PrefetchBytes(kFile, 0, 100, epoch), PrefetchResult::kStale);
  EXPECT_EQ(backend_->read_calls(), 0);
}

}  // namespace stagio
