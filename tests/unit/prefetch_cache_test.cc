// BlockCache's prefetch side: Prefetch, the invalidation epoch, Contains, FetchScope, the
// outcomes reported to the backend, the prefetch counters, and eviction's preference for used
// blocks over prefetched ones nobody has read yet.
#include "cache/block_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/prefetch_cache_fixture.h"
#include "support/prefetch_printers.h"
#include "support/read_logging_backend.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

using Outcomes = std::vector<PrefetchOutcome>;

using PrefetchBackend = test_support::ReadLoggingBackend;

using test_support::Background;
using test_support::Str;

class PrefetchCacheTest : public test_support::PrefetchCacheFixture {};

// ----- prefetch, then read -----------------------------------------------------------------

TEST_F(PrefetchCacheTest, PrefetchedBlockIsUsedInTimeWithoutASecondStorageRead) {
  Init(8 * kBlock, 8 * kBlock);
  EXPECT_FALSE(cache_->Contains(kFile, 3));
  EXPECT_EQ(Prefetch(3), PrefetchResult::kFetched);
  EXPECT_TRUE(cache_->Contains(kFile, 3));
  EXPECT_EQ(backend_->reads(), (std::vector<PrefetchBackend::ReadRecord>{{3, 0, kBlock}}));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 1u);
  EXPECT_EQ(Stat(Counter::prefetch_used), 0u);
  EXPECT_EQ(Stat(Counter::storage_reads), 1u);
  EXPECT_EQ(Stat(Counter::demand_fetches), 0u);
  EXPECT_TRUE(backend_->outcomes().empty()) << "nothing has used the block yet";

  EXPECT_EQ(ReadString(3, 100, 200), Str(original_, 3 * kBlock + 100, 200));
  EXPECT_EQ(backend_->read_calls(), 1) << "a prefetched block was read from storage again";
  EXPECT_EQ(Stat(Counter::cache_hits), 1u);
  EXPECT_EQ(Stat(Counter::cache_misses), 0u);
  EXPECT_EQ(Stat(Counter::demand_fetches), 0u);
  EXPECT_EQ(Stat(Counter::prefetch_used), 1u);
  EXPECT_EQ(Stat(Counter::prefetch_late), 0u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedInTime});

  // A block is used once: later reads of it are plain hits.
  EXPECT_EQ(ReadString(3, 0, kBlock), Str(original_, 3 * kBlock, kBlock));
  EXPECT_EQ(Stat(Counter::prefetch_used), 1u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedInTime});
  EXPECT_EQ(backend_->read_calls(), 1);
}

TEST_F(PrefetchCacheTest, ReadOfABlockBeingPrefetchedWaitsForItInsteadOfFetchingAgain) {
  Init(16 * kBlock, 16 * kBlock);
  // Nothing in the cache shows that a reader has started waiting, so the reader gets a window
  // to get there while the prefetch is held. Whatever it finds, there must be one storage read
  // and consistent counters; the case under test is the reader arriving during the fetch, and
  // if it came only after it (a plain hit), the next block is tried with a longer window.
  bool saw_wait = false;
  std::chrono::milliseconds window(50);
  for (uint64_t index = 0; index < 6 && !saw_wait; ++index, window *= 2) {
    SCOPED_TRACE("block " + std::to_string(index));
    const uint64_t late_before = Stat(Counter::prefetch_late);
    const uint64_t used_before = Stat(Counter::prefetch_used);
    const int reads_before = backend_->read_calls();

    backend_->HoldNextRead();
    PrefetchResult result = PrefetchResult::kFailed;
    Background prefetcher([&] { result = Prefetch(index); }, [&] { backend_->ReleaseRead(); });
    ASSERT_TRUE(backend_->WaitReadHeld()) << "the prefetch never reached ReadRange";
    EXPECT_TRUE(cache_->Contains(kFile, index)) << "a block on its way counts as cached";

    std::string out(kBlock, '\0');
    Status status;
    Background reader([&] { status = cache_->Read(kFile, index, 0, kBlock, out.data()); },
                      [&] { backend_->ReleaseRead(); });
    EXPECT_FALSE(backend_->WaitReadCalls(reads_before + 2, window))
        << "the reader fetched a block that was being prefetched";
    backend_->ReleaseRead();
    reader.Join();
    prefetcher.Join();

    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(result, PrefetchResult::kFetched);
    EXPECT_EQ(out, Str(original_, index * kBlock, kBlock));
    EXPECT_EQ(backend_->reads_of(index), 1);
    EXPECT_EQ(Stat(Counter::demand_fetches), 0u);
    EXPECT_EQ(Stat(Counter::prefetch_used), used_before + 1);
    const Outcomes outcomes = backend_->outcomes();
    ASSERT_EQ(outcomes.size(), index + 1);
    if (outcomes.back() == PrefetchOutcome::kUsedAfterWait) {
      saw_wait = true;
      EXPECT_EQ(Stat(Counter::prefetch_late), late_before + 1);
    } else {
      EXPECT_EQ(outcomes.back(), PrefetchOutcome::kUsedInTime);
      EXPECT_EQ(Stat(Counter::prefetch_late), late_before);
    }
  }
  EXPECT_TRUE(saw_wait) << "no reader ever arrived while its block's prefetch was held";
  EXPECT_EQ(Stat(Counter::prefetch_issued), backend_->outcomes().size());
}

TEST_F(PrefetchCacheTest, WriteDuringAnInFlightPrefetchIsNotOverwrittenByTheFetchedData) {
  Init(8 * kBlock, 8 * kBlock);
  backend_->HoldNextRead();
  PrefetchResult result = PrefetchResult::kFailed;
  Background prefetcher([&] { result = Prefetch(2); }, [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the prefetch never reached ReadRange";

  const std::string data(300, 'N');
  WriteString(2, 1000, data);
  backend_->ReleaseRead();
  prefetcher.Join();
  EXPECT_EQ(result, PrefetchResult::kFetched);

  std::string expected = Str(original_, 2 * kBlock, kBlock);
  expected.replace(1000, data.size(), data);
  EXPECT_EQ(ReadString(2, 0, kBlock), expected) << "the prefetch overwrote bytes written meanwhile";
  EXPECT_EQ(backend_->reads_of(2), 1);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedInTime});
  ASSERT_OK(cache_->FlushFile(kFile));
  EXPECT_EQ(backend_->StorageBytes(2 * kBlock + 1000, data.size()), data);
  EXPECT_EQ(backend_->StorageBytes(2 * kBlock, 1000), Str(original_, 2 * kBlock, 1000));
}

// ----- invalidation ------------------------------------------------------------------------

TEST_F(PrefetchCacheTest, PrefetchPlannedBeforeDropCleanBlocksIsStaleAndFetchesNothing) {
  Init(8 * kBlock, 8 * kBlock);
  const uint64_t planned = Epoch();
  cache_->DropCleanBlocks(kFile);
  EXPECT_NE(Epoch(), planned);
  EXPECT_EQ(cache_->Prefetch(kFile, 4, planned), PrefetchResult::kStale);
  EXPECT_EQ(backend_->read_calls(), 0);
  EXPECT_EQ(cache_->block_count(), 0u);
  EXPECT_FALSE(cache_->Contains(kFile, 4));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 0u);
  EXPECT_TRUE(backend_->outcomes().empty());

  // DiscardFile invalidates too; the current epoch still works.
  const uint64_t before_discard = Epoch();
  cache_->DiscardFile(kFile);
  EXPECT_EQ(cache_->Prefetch(kFile, 4, before_discard), PrefetchResult::kStale);
  EXPECT_EQ(backend_->read_calls(), 0);
  EXPECT_EQ(Prefetch(4), PrefetchResult::kFetched);
  EXPECT_EQ(backend_->reads_of(4), 1);
}

TEST_F(PrefetchCacheTest, EpochsOfAFileRegisteredAgainNeverMatch) {
  Init(8 * kBlock, 8 * kBlock);
  const uint64_t first = Epoch();
  cache_->DiscardFile(kFile);
  cache_->UnregisterFile(kFile);
  EXPECT_EQ(cache_->InvalidationEpoch(kFile), 0u) << "an unknown file has epoch 0";
  EXPECT_EQ(cache_->Prefetch(kFile, 0, 0), PrefetchResult::kStale);
  cache_->RegisterFile(kFile, backend_, kBlock);
  EXPECT_NE(Epoch(), first);
  EXPECT_EQ(cache_->Prefetch(kFile, 0, first), PrefetchResult::kStale);
  EXPECT_EQ(backend_->read_calls(), 0);
}

TEST_F(PrefetchCacheTest, PrefetchInFlightDuringDropCleanBlocksLeavesNothingValid) {
  Init(8 * kBlock, 8 * kBlock);
  backend_->HoldNextRead();
  PrefetchResult result = PrefetchResult::kFailed;
  Background prefetcher([&] { result = Prefetch(5); }, [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the prefetch never reached ReadRange";
  cache_->DropCleanBlocks(kFile);  // a sync while the prefetch is on its way
  backend_->ReleaseRead();
  prefetcher.Join();

  EXPECT_EQ(result, PrefetchResult::kStale);
  EXPECT_FALSE(cache_->Contains(kFile, 5));
  EXPECT_EQ(cache_->block_count(), 0u);
  // Storage changes after the sync; a read must see it, i.e. fetch again.
  WriteStorageBehindTheCache(5, 0, "after the sync");
  EXPECT_EQ(ReadString(5, 0, 14), "after the sync");
  EXPECT_EQ(backend_->reads_of(5), 2);
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u);
  EXPECT_EQ(Stat(Counter::prefetch_used), 0u);
  EXPECT_TRUE(backend_->outcomes().empty()) << "a stale prefetch is neither used nor wasted";
}

TEST_F(PrefetchCacheTest, StalePrefetchKeepsBytesWrittenDuringIt) {
  Init(8 * kBlock, 8 * kBlock);
  backend_->HoldNextRead();
  PrefetchResult result = PrefetchResult::kFailed;
  Background prefetcher([&] { result = Prefetch(6); }, [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the prefetch never reached ReadRange";
  WriteString(6, 100, "written");
  cache_->DropCleanBlocks(kFile);
  backend_->ReleaseRead();
  prefetcher.Join();
  EXPECT_EQ(result, PrefetchResult::kStale);

  // The written bytes are still there and served without storage; the rest is not valid.
  EXPECT_FALSE(cache_->Contains(kFile, 6));
  EXPECT_EQ(cache_->dirty_bytes(), kBlock);
  EXPECT_EQ(ReadString(6, 100, 7), "written");
  EXPECT_EQ(backend_->reads_of(6), 1);
  WriteStorageBehindTheCache(6, 0, "fresh");
  std::string expected = Str(original_, 6 * kBlock, kBlock);
  expected.replace(0, 5, "fresh");
  expected.replace(100, 7, "written");
  EXPECT_EQ(ReadString(6, 0, kBlock), expected);
  EXPECT_EQ(backend_->reads_of(6), 2);
}

TEST_F(PrefetchCacheTest, DroppedUnusedPrefetchCountsWastedButReportsNoOutcome) {
  Init(8 * kBlock, 8 * kBlock);
  EXPECT_EQ(Prefetch(1), PrefetchResult::kFetched);
  EXPECT_EQ(Prefetch(2), PrefetchResult::kFetched);
  ReadString(2, 0, 10);
  cache_->DropCleanBlocks(kFile);
  EXPECT_EQ(cache_->block_count(), 0u);
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 1u);  // block 1; block 2 was used
  EXPECT_EQ(Stat(Counter::cache_evictions), 0u);
  // A sync says nothing about the prefetch depth, so no kWasted outcome.
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedInTime});
}

// ----- overtaken and failed prefetches -----------------------------------------------------

TEST_F(PrefetchCacheTest, PrefetchOfABlockAlreadyCachedIsOvertaken) {
  Init(8 * kBlock, 8 * kBlock);
  ReadString(1, 0, kBlock);
  EXPECT_EQ(Prefetch(1), PrefetchResult::kAlreadyCached);
  EXPECT_EQ(backend_->reads_of(1), 1);
  EXPECT_EQ(Stat(Counter::prefetch_issued), 0u);
  EXPECT_EQ(Stat(Counter::prefetch_late), 1u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kOvertaken});
  // The block was not prefetched: reading it again is not a use.
  ReadString(1, 0, 10);
  EXPECT_EQ(Stat(Counter::prefetch_used), 0u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kOvertaken});
}

TEST_F(PrefetchCacheTest, PrefetchOfABlockADemandReadIsFetchingIsOvertaken) {
  Init(8 * kBlock, 8 * kBlock);
  backend_->HoldNextRead();
  std::string out(kBlock, '\0');
  Status status;
  Background reader([&] { status = cache_->Read(kFile, 2, 0, kBlock, out.data()); },
                    [&] { backend_->ReleaseRead(); });
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the demand read never reached ReadRange";
  EXPECT_EQ(Prefetch(2), PrefetchResult::kInFlight);
  backend_->ReleaseRead();
  reader.Join();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(out, Str(original_, 2 * kBlock, kBlock));
  EXPECT_EQ(backend_->reads_of(2), 1);
  EXPECT_EQ(Stat(Counter::prefetch_issued), 0u);
  EXPECT_EQ(Stat(Counter::prefetch_late), 1u);
  EXPECT_EQ(Stat(Counter::prefetch_used), 0u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kOvertaken});
}

TEST_F(PrefetchCacheTest, PrefetchOfAPartlyCachedBlockFetchesTheWholeBlock) {
  Init(8 * kBlock, 8 * kBlock);
  ReadString(3, 100, 50, FetchScope::kRequestedBytes);
  EXPECT_FALSE(cache_->Contains(kFile, 3)) << "a partly valid block is not cached";
  EXPECT_EQ(Prefetch(3), PrefetchResult::kFetched);
  EXPECT_TRUE(cache_->Contains(kFile, 3));
  EXPECT_EQ(backend_->reads(), (std::vector<PrefetchBackend::ReadRecord>{
                                   {3, 100, 50}, {3, 0, kBlock}}));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 1u);
  EXPECT_EQ(Stat(Counter::prefetch_late), 0u);
  EXPECT_EQ(ReadString(3, 0, kBlock), Str(original_, 3 * kBlock, kBlock));
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kUsedInTime});
}

TEST_F(PrefetchCacheTest, FailedPrefetchCachesNothingAndTheReadReportsTheError) {
  Init(8 * kBlock, 8 * kBlock);
  backend_->set_fail_reads(true);
  EXPECT_EQ(Prefetch(1), PrefetchResult::kFailed);
  EXPECT_EQ(cache_->block_count(), 0u);
  EXPECT_EQ(cache_->charged_bytes(), 0u);
  EXPECT_FALSE(cache_->Contains(kFile, 1));
  EXPECT_EQ(Stat(Counter::storage_reads), 0u);

  // The read fetches again, and it is the read that reports the error.
  std::string out(16, '\0');
  Status status = cache_->Read(kFile, 1, 0, out.size(), out.data());
  EXPECT_EQ(status.code(), Status::Code::kIOError) << status.ToString();
  EXPECT_EQ(backend_->reads_of(1), 2);
  EXPECT_EQ(cache_->block_count(), 0u);

  backend_->set_fail_reads(false);
  EXPECT_EQ(ReadString(1, 0, 16), Str(original_, kBlock, 16));
  EXPECT_EQ(backend_->reads_of(1), 3);
  EXPECT_EQ(Stat(Counter::prefetch_used), 0u);
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 0u);
  EXPECT_TRUE(backend_->outcomes().empty());
}

// ----- fetch scope -------------------------------------------------------------------------

TEST_F(PrefetchCacheTest, RequestedBytesScopeFetchesOnlyTheMissingBytesAskedFor) {
  Init(8 * kBlock, 8 * kBlock);
  using Reads = std::vector<PrefetchBackend::ReadRecord>;
  EXPECT_EQ(ReadString(1, 100, 50, FetchScope::kRequestedBytes), Str(original_, kBlock + 100, 50));
  EXPECT_EQ(backend_->reads(), (Reads{{1, 100, 50}}));
  EXPECT_EQ(Stat(Counter::storage_read_bytes), 50u);

  // Overlapping the valid bytes: only the part that is missing.
  EXPECT_EQ(ReadString(1, 120, 80, FetchScope::kRequestedBytes), Str(original_, kBlock + 120, 80));
  EXPECT_EQ(backend_->reads(), (Reads{{1, 100, 50}, {1, 150, 50}}));

  // Inside the valid bytes: a hit.
  EXPECT_EQ(ReadString(1, 110, 90, FetchScope::kRequestedBytes), Str(original_, kBlock + 110, 90));
  EXPECT_EQ(backend_->read_calls(), 2);

  // Missing bytes on both sides of valid ones: one request from the first to the last.
  EXPECT_EQ(ReadString(1, 0, 300, FetchScope::kRequestedBytes), Str(original_, kBlock, 300));
  EXPECT_EQ(backend_->reads(), (Reads{{1, 100, 50}, {1, 150, 50}, {1, 0, 300}}));
  EXPECT_EQ(Stat(Counter::storage_read_bytes), 400u);
  EXPECT_FALSE(cache_->Contains(kFile, 1));

  // The whole-block scope fetches the whole block.
  EXPECT_EQ(ReadString(1, 1000, 10), Str(original_, kBlock + 1000, 10));
  EXPECT_EQ(backend_->reads().back(), (PrefetchBackend::ReadRecord{1, 0, kBlock}));
  EXPECT_TRUE(cache_->Contains(kFile, 1));
  EXPECT_EQ(Stat(Counter::demand_fetches), 4u);
}

// ----- eviction ----------------------------------------------------------------------------

TEST_F(PrefetchCacheTest, EvictionTakesUsedBlocksBeforeUnusedPrefetchedOnes) {
  Init(4 * kBlock, 16 * kBlock);
  auto cached = [&] {
    std::vector<uint64_t> blocks;
    for (uint64_t index = 0; index < 16; ++index) {
      if (cache_->Contains(kFile, index)) blocks.push_back(index);
    }
    return blocks;
  };
  ReadString(0, 0, 10);
  ReadString(1, 0, 10);
  EXPECT_EQ(Prefetch(2), PrefetchResult::kFetched);
  EXPECT_EQ(Prefetch(3), PrefetchResult::kFetched);
  ASSERT_EQ(cached(), (std::vector<uint64_t>{0, 1, 2, 3}));

  // New blocks push out the used ones, least recently used first, although the prefetched
  // ones are older.
  ReadString(4, 0, 10);
  EXPECT_EQ(cached(), (std::vector<uint64_t>{1, 2, 3, 4}));
  ReadString(5, 0, 10);
  EXPECT_EQ(cached(), (std::vector<uint64_t>{2, 3, 4, 5}));
  EXPECT_EQ(Prefetch(6), PrefetchResult::kFetched);
  EXPECT_EQ(cached(), (std::vector<uint64_t>{2, 3, 5, 6}));
  EXPECT_EQ(Prefetch(7), PrefetchResult::kFetched);
  EXPECT_EQ(cached(), (std::vector<uint64_t>{2, 3, 6, 7}));
  EXPECT_EQ(Stat(Counter::cache_evictions), 4u);
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 0u);
  EXPECT_TRUE(backend_->outcomes().empty());

  // Only unused prefetched blocks are left: now they go, oldest first, as wasted.
  EXPECT_EQ(Prefetch(8), PrefetchResult::kFetched);
  EXPECT_EQ(cached(), (std::vector<uint64_t>{3, 6, 7, 8}));
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 1u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kWasted});
  EXPECT_EQ(Prefetch(9), PrefetchResult::kFetched);
  EXPECT_EQ(cached(), (std::vector<uint64_t>{6, 7, 8, 9}));
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 2u);
  EXPECT_EQ(backend_->outcomes(), (Outcomes{PrefetchOutcome::kWasted, PrefetchOutcome::kWasted}));
  EXPECT_EQ(Stat(Counter::cache_evictions), 6u);

  // The survivors are still served without storage.
  const int reads = backend_->read_calls();
  EXPECT_EQ(ReadString(6, 0, kBlock), Str(original_, 6 * kBlock, kBlock));
  EXPECT_EQ(backend_->read_calls(), reads);
  EXPECT_EQ(backend_->outcomes().back(), PrefetchOutcome::kUsedInTime);
  EXPECT_LE(cache_->charged_bytes(), 4 * kBlock);
}

TEST_F(PrefetchCacheTest, ADemandReadIntoACacheFullOfUnusedPrefetchesKeepsItsBlock) {
  // "A prefetched block that no read has used yet is kept out of eviction while older used
  // blocks can go, unless nothing else is left": the block a read has just fetched is not an
  // older used block, so when everything else is unused prefetches, the oldest of those goes.
  Init(4 * kBlock, 16 * kBlock);
  for (uint64_t index = 0; index < 4; ++index) {
    EXPECT_EQ(Prefetch(index), PrefetchResult::kFetched);
  }
  EXPECT_EQ(ReadString(8, 0, 100), Str(original_, 8 * kBlock, 100));
  EXPECT_TRUE(cache_->Contains(kFile, 8)) << "the block just read was evicted at once";
  EXPECT_FALSE(cache_->Contains(kFile, 0));
  EXPECT_EQ(Stat(Counter::prefetch_wasted), 1u);
  EXPECT_EQ(backend_->outcomes(), Outcomes{PrefetchOutcome::kWasted});
  // The rest of the block is a hit, not another storage read.
  EXPECT_EQ(ReadString(8, 100, 100), Str(original_, 8 * kBlock + 100, 100));
  EXPECT_EQ(backend_->reads_of(8), 1);
  EXPECT_LE(cache_->charged_bytes(), 4 * kBlock);
}

}  // namespace
}  // namespace stagio
