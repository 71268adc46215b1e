// FetchForHelper, how a pre-execution helper brings one prefetch call's blocks into the cache:
// runs of consecutive missing blocks, each one storage request of at most max_request_bytes;
// blocks already cached announced instead of fetched (and then kept from eviction until a read
// uses them); the lag check before each request; storage errors. The PPIS gate's part is in
// io_priority_gate_test.cc.
#include "preexec/helper_fetch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/helper_fetch_fixture.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

using test_support::Str;
using Reads = std::vector<test_support::ReadLoggingBackend::ReadRecord>;

class HelperFetchTest : public test_support::HelperFetchFixture {};

// ----- runs and request size ---------------------------------------------------------------

TEST_F(HelperFetchTest, ConsecutiveMissingBlocksAreOneRequestEach) {
  Init(24 * kBlock, 24 * kBlock);
  const HelperFetchResult fetched = Fetch({0, 1, 3, 4, 5, 9}, Options(/*ppis=*/true));
  EXPECT_EQ(backend_->reads(), (Reads{{0, 0, 2 * kBlock}, {3, 0, 3 * kBlock}, {9, 0, kBlock}}));
  EXPECT_EQ(fetched.announced_bytes, 6 * kBlock);
  EXPECT_EQ(fetched.gate_waits, 0u) << "the main thread was outside I/O";
  EXPECT_EQ(Stat(Counter::prefetch_issued), 6u);
  // What was fetched is what the main thread reads, without going to storage.
  EXPECT_EQ(ReadString(4, 10, 100), Str(original_, 4 * kBlock + 10, 100));
  EXPECT_EQ(backend_->read_calls(), 3);
}

TEST_F(HelperFetchTest, MaxRequestBytesSplitsLongRuns) {
  Init(24 * kBlock, 24 * kBlock);
  const HelperFetchResult fetched =
      Fetch({0, 1, 2, 3, 4, 5, 6, 10, 11}, Options(/*ppis=*/true, 2 * kBlock));
  EXPECT_EQ(backend_->reads(), (Reads{{0, 0, 2 * kBlock},
                                      {2, 0, 2 * kBlock},
                                      {4, 0, 2 * kBlock},
                                      {6, 0, kBlock},
                                      {10, 0, 2 * kBlock}}));
  EXPECT_EQ(fetched.announced_bytes, 9 * kBlock);
}

TEST_F(HelperFetchTest, MaxRequestSmallerThanABlockStillFetchesABlockPerRequest) {
  Init(24 * kBlock, 24 * kBlock);
  Fetch({7, 8, 9}, Options(/*ppis=*/true, kBlock / 2));
  EXPECT_EQ(backend_->reads(), (Reads{{7, 0, kBlock}, {8, 0, kBlock}, {9, 0, kBlock}}));
}

TEST_F(HelperFetchTest, MaxRequestBytesNotAMultipleOfTheBlockSizeRoundsDown) {
  Init(24 * kBlock, 24 * kBlock);
  Fetch({0, 1, 2, 3, 4}, Options(/*ppis=*/true, 2 * kBlock + kBlock / 2));
  EXPECT_EQ(backend_->reads(), (Reads{{0, 0, 2 * kBlock}, {2, 0, 2 * kBlock}, {4, 0, kBlock}}));
}

TEST_F(HelperFetchTest, NoBlocksNoRequests) {
  Init(24 * kBlock, 24 * kBlock);
  const HelperFetchResult fetched = Fetch({}, Options(/*ppis=*/true));
  EXPECT_EQ(backend_->read_calls(), 0);
  EXPECT_EQ(fetched.announced_bytes, 0u);
}

TEST_F(HelperFetchTest, UnknownFileFetchesNothing) {
  Init(24 * kBlock, 24 * kBlock);
  const HelperFetchResult fetched =
      FetchForHelper(*cache_, kFile + 1, WholeBlocks({0, 1}), Options(true), cancelled_,
                     [] { return true; });
  EXPECT_EQ(backend_->read_calls(), 0);
  EXPECT_EQ(fetched.announced_bytes, 0u);
  EXPECT_FALSE(fetched.failed);
}

// ----- blocks already cached ---------------------------------------------------------------

TEST_F(HelperFetchTest, CachedBlocksAreAnnouncedNotFetched) {
  Init(24 * kBlock, 24 * kBlock);
  ReadString(2, 0, kBlock);  // the main thread has block 2 cached
  ASSERT_EQ(backend_->read_calls(), 1);
  const HelperFetchResult fetched = Fetch({1, 2, 3}, Options(/*ppis=*/true));
  // The cached block cuts the run in two.
  EXPECT_EQ(backend_->reads(), (Reads{{2, 0, kBlock}, {1, 0, kBlock}, {3, 0, kBlock}}));
  EXPECT_EQ(fetched.announced_bytes, 3 * kBlock) << "cached blocks count as announced";
}

TEST_F(HelperFetchTest, AllCachedMeansNoRequestAndNoGateWait) {
  Init(24 * kBlock, 24 * kBlock);
  ReadString(5, 0, kBlock);
  gate_.Enter();  // would hold any request back
  StartHelper({5}, Options(/*ppis=*/true));
  EXPECT_TRUE(FinishHelper()) << "the helper waited at the gate for a cached block";
  gate_.Leave();
  EXPECT_EQ(backend_->read_calls(), 1);
  EXPECT_EQ(result().gate_waits, 0u);
  EXPECT_EQ(result().announced_bytes, kBlock);
}

TEST_F(HelperFetchTest, AnnouncedBlockOutlivesOlderBlocksUntilItIsRead) {
  // 4 blocks of capacity in one shard: exact LRU.
  Init(4 * kBlock, 16 * kBlock);
  ReadString(0, 0, kBlock);
  ReadString(1, 0, kBlock);  // LRU order now 1, 0 (0 least recently used)
  const HelperFetchResult fetched = Fetch({0}, Options(/*ppis=*/true));
  ASSERT_EQ(fetched.announced_bytes, kBlock);
  ASSERT_EQ(backend_->read_calls(), 2) << "the cached block was fetched again";

  // Pressure: four more blocks through a four-block cache.
  for (uint64_t index : {2, 3, 4, 5}) ReadString(index, 0, kBlock);
  EXPECT_TRUE(cache_->Contains(kFile, 0)) << "the announced block was evicted";
  EXPECT_FALSE(cache_->Contains(kFile, 1)) << "the unannounced one was kept instead";

  // The read it was announced for finds it ...
  const int reads_before = backend_->read_calls();
  EXPECT_EQ(ReadString(0, 0, 64), Str(original_, 0, 64));
  EXPECT_EQ(backend_->read_calls(), reads_before);
  // ... and after that read it is an ordinary block: once least recently used, it goes.
  for (uint64_t index : {6, 7, 8, 9}) ReadString(index, 0, kBlock);
  EXPECT_FALSE(cache_->Contains(kFile, 0)) << "a block stayed protected after its read";
}

TEST_F(HelperFetchTest, UnannouncedBlockIsEvictedInLruOrder) {
  // The control of the test above: without the announcement, block 0 goes first.
  Init(4 * kBlock, 16 * kBlock);
  ReadString(0, 0, kBlock);
  ReadString(1, 0, kBlock);
  for (uint64_t index : {2, 3, 4}) ReadString(index, 0, kBlock);
  EXPECT_FALSE(cache_->Contains(kFile, 0));
  EXPECT_TRUE(cache_->Contains(kFile, 1));
}

// ----- lag and errors ----------------------------------------------------------------------

TEST_F(HelperFetchTest, NoLongerWantedStopsBeforeAnyRequest) {
  Init(24 * kBlock, 24 * kBlock);
  ReadString(7, 0, kBlock);
  const HelperFetchResult fetched = Fetch({1, 2, 7}, Options(/*ppis=*/true), [] { return false; });
  EXPECT_TRUE(fetched.lagging);
  EXPECT_FALSE(fetched.failed);
  EXPECT_EQ(backend_->read_calls(), 1) << "only the main thread's own read";
  EXPECT_EQ(fetched.announced_bytes, kBlock) << "the cached block was still announced";
  EXPECT_FALSE(cache_->Contains(kFile, 1));
}

TEST_F(HelperFetchTest, MainThreadCatchingUpStopsTheRemainingRuns) {
  Init(24 * kBlock, 24 * kBlock);
  int asked = 0;
  // Wanted for the first request; by the second the main thread has begun the call.
  const HelperFetchResult fetched =
      Fetch({1, 3, 5}, Options(/*ppis=*/true), [&asked] { return ++asked == 1; });
  EXPECT_TRUE(fetched.lagging);
  EXPECT_EQ(backend_->reads(), (Reads{{1, 0, kBlock}}));
  EXPECT_EQ(fetched.announced_bytes, kBlock);
  EXPECT_EQ(asked, 2) << "asked once before each request it considered";
}

TEST_F(HelperFetchTest, StorageErrorStopsTheFetch) {
  Init(24 * kBlock, 24 * kBlock);
  backend_->set_fail_reads(true);
  const HelperFetchResult fetched = Fetch({1, 3, 5}, Options(/*ppis=*/true));
  EXPECT_TRUE(fetched.failed);
  EXPECT_FALSE(fetched.lagging);
  EXPECT_EQ(backend_->read_calls(), 1) << "runs after the failed one were read";
  EXPECT_EQ(fetched.announced_bytes, 0u);
  EXPECT_FALSE(cache_->Contains(kFile, 1));
  // Nothing was cached by the failure: the main thread's own read goes to storage.
  backend_->set_fail_reads(false);
  EXPECT_EQ(ReadString(1, 0, 32), Str(original_, kBlock, 32));
}

}  // namespace
}  // namespace stagio
