// The prefetch engine around the cache: PrefetchQueue, the I/O thread's prefetching (over a
// real BlockCache), and FilePrefetcher's plans and adaptive depth.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cache/block_cache.h"
#include "cache/write_back_policy.h"
#include "prefetch/file_prefetcher.h"
#include "cache/io_thread.h"
#include "cache/prefetch_queue.h"
#include "support/in_memory_block_backend.h"
#include "support/prefetch_printers.h"
#include "support/test_helpers.h"

namespace stagio {

// For readable failure messages (found by argument-dependent lookup, hence not in the
// anonymous namespace); the cache's enums have theirs in support/prefetch_printers.h.
[[maybe_unused]] static void PrintTo(const PrefetchJob& job, std::ostream* out) {
  *out << "{file " << job.file_id << ", blocks " << job.block_index << " + " << job.block_count
       << ", epoch " << job.epoch << "}";
}

namespace {

using Blocks = std::vector<uint64_t>;

constexpr uint64_t kB = 4096;  // the block size everywhere here
constexpr uint64_t kFile = 1;

// How long a test gives another thread to do something it must not do. Correct code passes
// whatever this is; a longer window only makes a buggy interleaving likelier to show.
constexpr std::chrono::milliseconds kMisbehaviourWindow(200);

// ----- PrefetchQueue -----------------------------------------------------------------------

PrefetchJob Job(uint64_t file, uint64_t block, uint64_t epoch = 1, uint64_t count = 1) {
  return {file, block, epoch, count};
}

// Pops everything, as (file, block) pairs in order.
std::vector<std::pair<uint64_t, uint64_t>> Drain(PrefetchQueue* queue) {
  std::vector<std::pair<uint64_t, uint64_t>> popped;
  while (auto job = queue->Pop()) popped.emplace_back(job->file_id, job->block_index);
  return popped;
}

using Popped = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(PrefetchQueueTest, OldestFirstAndEachBlockOnce) {
  PrefetchQueue queue(8);
  EXPECT_TRUE(queue.empty());
  EXPECT_FALSE(queue.Pop().has_value());
  EXPECT_TRUE(queue.Push(Job(1, 5, 3)));
  EXPECT_TRUE(queue.Push(Job(1, 6)));
  EXPECT_FALSE(queue.Push(Job(1, 5, 9))) << "a block already queued is not queued again";
  EXPECT_TRUE(queue.Push(Job(2, 5))) << "the same index of another file is another block";
  EXPECT_EQ(queue.size(), 3u);

  const auto first = queue.Pop();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->file_id, 1u);
  EXPECT_EQ(first->block_index, 5u);
  EXPECT_EQ(first->epoch, 3u) << "the first job queued is kept, with its epoch";
  // Once popped, the block may be queued again (behind the others).
  EXPECT_TRUE(queue.Push(Job(1, 5)));
  EXPECT_EQ(Drain(&queue), (Popped{{1, 6}, {2, 5}, {1, 5}}));
  EXPECT_TRUE(queue.empty());
}

TEST(PrefetchQueueTest, RunJobsAreKeyedByTheirFirstBlock) {
  PrefetchQueue queue(8);
  EXPECT_TRUE(queue.Push(Job(1, 4, 1, 3)));
  EXPECT_FALSE(queue.Push(Job(1, 4))) << "same first block: taken for the queued run";
  EXPECT_FALSE(queue.Push(Job(1, 4, 1, 8))) << "a longer run from the same block too";
  EXPECT_TRUE(queue.Push(Job(1, 5))) << "inside the run, but another first block";
  EXPECT_TRUE(queue.Push(Job(1, 6, 1, 4))) << "overlapping, but another first block";
  const auto first = queue.Pop();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->block_index, 4u);
  EXPECT_EQ(first->block_count, 3u) << "the first job queued is kept, with its length";
  EXPECT_EQ(Drain(&queue), (Popped{{1, 5}, {1, 6}}));
  EXPECT_EQ(PrefetchJob{}.block_count, 1u) << "a job is one block unless it says otherwise";
}

TEST(PrefetchQueueTest, FullQueueDropsTheOldest) {
  PrefetchQueue queue(3);
  for (uint64_t block = 0; block < 3; ++block) EXPECT_TRUE(queue.Push(Job(1, block)));
  EXPECT_TRUE(queue.Push(Job(1, 3)));
  EXPECT_EQ(queue.size(), 3u);
  // The dropped block is no longer queued, so it can be queued again; the others still are.
  EXPECT_FALSE(queue.Push(Job(1, 2)));
  EXPECT_TRUE(queue.Push(Job(1, 0)));  // drops block 1
  EXPECT_EQ(Drain(&queue), (Popped{{1, 2}, {1, 3}, {1, 0}}));

  PrefetchQueue none(0);
  EXPECT_FALSE(none.Push(Job(1, 0)));
  EXPECT_TRUE(none.empty());
}

TEST(PrefetchQueueTest, DropFileRemovesOnlyThatFilesJobs) {
  PrefetchQueue queue(16);
  queue.Push(Job(1, 0));
  queue.Push(Job(2, 0));
  queue.Push(Job(1, 1));
  queue.Push(Job(3, 7));
  queue.Push(Job(2, 1));
  queue.DropFile(2);
  EXPECT_EQ(queue.size(), 3u);
  // The file's blocks can be queued again; the others are still queued.
  EXPECT_TRUE(queue.Push(Job(2, 1)));
  EXPECT_FALSE(queue.Push(Job(1, 1)));
  EXPECT_FALSE(queue.Push(Job(3, 7)));
  EXPECT_EQ(Drain(&queue), (Popped{{1, 0}, {1, 1}, {3, 7}, {2, 1}}));
  queue.DropFile(42);  // unknown: nothing happens
  EXPECT_TRUE(queue.empty());
}

// ----- IoThread: prefetching ---------------------------------------------------------------

// The shared in-memory backend (which logs the prefetch outcomes the cache reports), logging
// the blocks each ReadRange fetched.
class EngineBackend : public test_support::InMemoryBlockBackend {
 public:
  using InMemoryBlockBackend::InMemoryBlockBackend;

  int reads_of(uint64_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(std::count(reads_.begin(), reads_.end(), index));
  }
  Blocks reads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return reads_;
  }

 private:
  void OnReadBlock(uint64_t index) override { reads_.push_back(index); }

  Blocks reads_;
};

using test_support::Pattern;

class IoThreadPrefetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = Pattern(32 * kB, 4242);
    backend_ = std::make_shared<EngineBackend>(kB, original_);
    cache_ = std::make_unique<BlockCache>(16 * kB, kB);
    cache_->RegisterFile(kFile, backend_, kB);
    // Write-back never starts: nothing here is written.
    io_ = std::make_unique<IoThread>(cache_.get(), WriteBackPolicy(100.0, 100.0));
  }
  void TearDown() override {
    backend_->ReleaseRead();  // never leave the I/O thread held at a gate (a failed ASSERT)
    io_.reset();
    EXPECT_FALSE(backend_->gate_timed_out()) << "a gated call was never released";
  }

  bool Enqueue(uint64_t index) {
    return io_->Enqueue(PrefetchJob{kFile, index, cache_->InvalidationEpoch(kFile)});
  }
  std::string ReadBlock(uint64_t index) {
    std::string out(kB, '\0');
    Status status = cache_->Read(kFile, index, 0, kB, out.data());
    EXPECT_TRUE(status.ok()) << status.ToString();
    return out;
  }
  std::string Original(uint64_t index) {
    return std::string(original_.data() + index * kB, kB);
  }
  uint64_t Stat(Counter counter) { return backend_->stats()->Get(counter); }

  std::vector<char> original_;
  std::shared_ptr<EngineBackend> backend_;
  std::unique_ptr<BlockCache> cache_;
  std::unique_ptr<IoThread> io_;
};

TEST_F(IoThreadPrefetchTest, PrefetchesQueuedBlocksInOrder) {
  for (uint64_t index : {4, 2, 7}) EXPECT_TRUE(Enqueue(index));
  io_->WaitIdle();
  EXPECT_EQ(backend_->reads(), (Blocks{4, 2, 7}));
  for (uint64_t index : {4, 2, 7}) EXPECT_TRUE(cache_->Contains(kFile, index));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 3u);
  EXPECT_EQ(ReadBlock(2), Original(2));
  EXPECT_EQ(backend_->read_calls(), 3);
  EXPECT_EQ(backend_->outcomes(), std::vector<PrefetchOutcome>{PrefetchOutcome::kUsedInTime});
}

TEST_F(IoThreadPrefetchTest, RunJobIsFetchedWithOneStorageRequest) {
  ReadBlock(6);  // cached: splits the run
  ASSERT_TRUE(io_->Enqueue(PrefetchJob{kFile, 3, cache_->InvalidationEpoch(kFile), 6}));
  io_->WaitIdle();
  EXPECT_EQ(backend_->reads(), (Blocks{6, 3, 7})) << "one request per run: [3, 6) and [7, 9)";
  for (uint64_t index = 3; index < 9; ++index) {
    EXPECT_TRUE(cache_->Contains(kFile, index)) << "block " << index;
  }
  EXPECT_EQ(Stat(Counter::prefetch_issued), 5u);
  EXPECT_EQ(Stat(Counter::prefetch_late), 1u) << "block 6 was there first";
  EXPECT_EQ(ReadBlock(4), Original(4));
  EXPECT_EQ(ReadBlock(8), Original(8));
  EXPECT_EQ(backend_->read_calls(), 3);
  EXPECT_EQ(Stat(Counter::prefetch_used), 2u);
}

TEST_F(IoThreadPrefetchTest, DemandReadDoesNotWaitForRunningOrQueuedPrefetches) {
  backend_->HoldNextRead();
  ASSERT_TRUE(Enqueue(0));  // A: held inside the backend
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the I/O thread never started prefetching";
  ASSERT_TRUE(Enqueue(1));  // B and C: queued behind A
  ASSERT_TRUE(Enqueue(2));

  // D, on this thread. Had it to wait for A, it could only return once the gate gave up.
  EXPECT_EQ(ReadBlock(9), Original(9));
  EXPECT_FALSE(backend_->gate_timed_out()) << "the demand read waited for the held prefetch";
  EXPECT_EQ(backend_->reads(), (Blocks{0, 9})) << "B or C ran before the demand read";
  EXPECT_TRUE(cache_->Contains(kFile, 0)) << "A is still in flight";
  EXPECT_FALSE(cache_->Contains(kFile, 1));
  EXPECT_FALSE(cache_->Contains(kFile, 2));
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u);

  backend_->ReleaseRead();
  io_->WaitIdle();
  EXPECT_EQ(backend_->reads(), (Blocks{0, 9, 1, 2}));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 3u);
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u);
  EXPECT_TRUE(backend_->outcomes().empty());
}

TEST_F(IoThreadPrefetchTest, DemandReadOfAQueuedBlockFetchesItAndThePrefetchIsOvertaken) {
  backend_->HoldNextRead();
  ASSERT_TRUE(Enqueue(0));
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the I/O thread never started prefetching";
  ASSERT_TRUE(Enqueue(5));  // queued, not started

  EXPECT_EQ(ReadBlock(5), Original(5));
  EXPECT_EQ(backend_->reads_of(5), 1);
  EXPECT_EQ(Stat(Counter::demand_fetches), 1u);

  backend_->ReleaseRead();
  io_->WaitIdle();
  EXPECT_EQ(backend_->reads_of(5), 1) << "the queued prefetch read the block again";
  EXPECT_EQ(backend_->reads(), (Blocks{0, 5}));
  EXPECT_EQ(Stat(Counter::prefetch_issued), 1u);  // block 0 only
  EXPECT_EQ(Stat(Counter::prefetch_late), 1u);
  EXPECT_EQ(Stat(Counter::prefetch_used), 0u);
  EXPECT_EQ(backend_->outcomes(), std::vector<PrefetchOutcome>{PrefetchOutcome::kOvertaken});
}

TEST_F(IoThreadPrefetchTest, WaitIdleReturnsOnceTheQueueHasDrained) {
  io_->WaitIdle();  // idle from the start: returns at once

  backend_->HoldNextRead();
  for (uint64_t index = 0; index < 4; ++index) ASSERT_TRUE(Enqueue(index));
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the I/O thread never started prefetching";
  std::promise<void> idle;
  std::future<void> idle_future = idle.get_future();
  std::thread waiter([&] {
    io_->WaitIdle();
    idle.set_value();
  });
  EXPECT_EQ(idle_future.wait_for(kMisbehaviourWindow), std::future_status::timeout)
      << "WaitIdle returned while a prefetch was held and three more were queued";
  backend_->ReleaseRead();
  idle_future.wait();
  waiter.join();
  // Everything it waited for is done.
  EXPECT_EQ(backend_->reads(), (Blocks{0, 1, 2, 3}));
  for (uint64_t index = 0; index < 4; ++index) {
    EXPECT_TRUE(cache_->Contains(kFile, index)) << "block " << index;
  }
  EXPECT_EQ(Stat(Counter::prefetch_issued), 4u);
}

TEST_F(IoThreadPrefetchTest, EnqueueDedupesAndDropPrefetchesForgetsTheFile) {
  backend_->HoldNextRead();
  ASSERT_TRUE(Enqueue(0));
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the I/O thread never started prefetching";
  EXPECT_TRUE(Enqueue(1));
  EXPECT_FALSE(Enqueue(1)) << "a queued block was queued twice";
  EXPECT_TRUE(Enqueue(2));
  io_->DropPrefetches(kFile);
  EXPECT_TRUE(Enqueue(3));
  backend_->ReleaseRead();
  io_->WaitIdle();
  EXPECT_EQ(backend_->reads(), (Blocks{0, 3})) << "dropped prefetches ran";
  EXPECT_FALSE(cache_->Contains(kFile, 1));
  EXPECT_FALSE(cache_->Contains(kFile, 2));
}

TEST_F(IoThreadPrefetchTest, JobsPlannedBeforeAnInvalidationFetchNothing) {
  backend_->HoldNextRead();
  ASSERT_TRUE(Enqueue(0));
  ASSERT_TRUE(backend_->WaitReadHeld()) << "the I/O thread never started prefetching";
  ASSERT_TRUE(Enqueue(1));
  cache_->DropCleanBlocks(kFile);  // a sync: both plans are stale now
  backend_->ReleaseRead();
  io_->WaitIdle();
  EXPECT_EQ(backend_->reads(), (Blocks{0})) << "a stale job was fetched";
  EXPECT_FALSE(cache_->Contains(kFile, 0)) << "a prefetch in flight during a sync left data";
  EXPECT_FALSE(cache_->Contains(kFile, 1));
  EXPECT_EQ(cache_->block_count(), 0u);
}

// ----- FilePrefetcher ----------------------------------------------------------------------

PrefetchConfig Config(PrefetchMode mode, uint64_t max_blocks = 8) {
  PrefetchConfig config;
  config.mode = mode;
  config.block_size = kB;
  config.history = 8;
  config.max_bytes = max_blocks * kB;
  return config;
}

Access BlockRead(uint64_t block) { return {block * kB, kB}; }

constexpr uint64_t kLargeFile = uint64_t{1} << 40;

// A fake file view: stream block s is file block first + s * stride, whole blocks. Records
// every call.
struct FakeView {
  explicit FakeView(uint64_t first_block = 0, uint64_t stride_blocks = 1)
      : first(first_block), stride(stride_blocks) {}

  uint64_t first;
  uint64_t stride;
  std::vector<std::pair<uint64_t, uint64_t>> calls;  // (stream offset, length)

  void operator()(uint64_t stream_offset, uint64_t length, std::vector<Access>* out) {
    calls.emplace_back(stream_offset, length);
    for (uint64_t s = stream_offset; s < stream_offset + length;) {
      const uint64_t within = s % kB;
      const uint64_t n = std::min(kB - within, stream_offset + length - s);
      out->push_back({(first + (s / kB) * stride) * kB + within, n});
      s += n;
    }
  }
};

// The file blocks the prefetcher sees as cached.
struct CachedSet {
  std::set<uint64_t> blocks;
  bool operator()(uint64_t index) const { return blocks.count(index) > 0; }
};

// Plans reads of whole blocks `reads`, in order, through `prefetcher` (stream offsets as if
// the view were contiguous); returns the plan of the last one.
PrefetchPlan PlanReads(FilePrefetcher* prefetcher, const Blocks& reads,
                       uint64_t file_size = kLargeFile, CachedSet* cached = nullptr,
                       FakeView* view = nullptr) {
  CachedSet none;
  FakeView identity;
  CachedSet& is_cached = cached != nullptr ? *cached : none;
  FakeView& map = view != nullptr ? *view : identity;
  PrefetchPlan plan;
  for (uint64_t block : reads) {
    const Access span = BlockRead(block);
    plan = prefetcher->PlanRead(span, span.end(), file_size, map, is_cached);
  }
  return plan;
}

TEST(FilePrefetcherTest, IndividualStridedStreamPlansTheNextBlocksWithinTheDepth) {
  FilePrefetcher prefetcher(Config(PrefetchMode::kIndividual));
  EXPECT_EQ(prefetcher.depth_bytes(), 2 * kB);  // a new stream starts two blocks ahead
  FakeView view;
  CachedSet cached;

  // No pattern yet: nothing to prefetch, and misses fetch only what they ask for.
  PrefetchPlan plan = PlanReads(&prefetcher, {0}, kLargeFile, &cached, &view);
  EXPECT_TRUE(plan.blocks.empty());
  EXPECT_EQ(plan.scope, FetchScope::kRequestedBytes);
  plan = PlanReads(&prefetcher, {3}, kLargeFile, &cached, &view);
  EXPECT_TRUE(plan.blocks.empty());
  EXPECT_EQ(plan.scope, FetchScope::kRequestedBytes);
  EXPECT_STREQ(prefetcher.predictor(), "none");

  // The third read confirms the stride once: the next strided block, whole. One confirmation
  // is trusted one read ahead; the second opens the whole depth.
  plan = PlanReads(&prefetcher, {6}, kLargeFile, &cached, &view);
  EXPECT_EQ(plan.blocks, (Blocks{9}));
  EXPECT_EQ(plan.scope, FetchScope::kWholeBlock);
  EXPECT_STREQ(prefetcher.predictor(), "strided");
  plan = PlanReads(&prefetcher, {9}, kLargeFile, &cached, &view);
  EXPECT_EQ(plan.blocks, (Blocks{12, 15}));

  // A cached block is not fetched again; it still counts towards the depth.
  cached.blocks = {15};
  plan = PlanReads(&prefetcher, {12}, kLargeFile, &cached, &view);
  EXPECT_EQ(plan.blocks, (Blocks{18}));
  EXPECT_EQ(plan.scope, FetchScope::kWholeBlock);
  cached.blocks = {18, 21};
  plan = PlanReads(&prefetcher, {15}, kLargeFile, &cached, &view);
  EXPECT_TRUE(plan.blocks.empty());
  EXPECT_EQ(plan.scope, FetchScope::kWholeBlock) << "the pattern is still known";

  EXPECT_TRUE(view.calls.empty()) << "individual mode consulted the view";
}

TEST(FilePrefetcherTest, NothingAtOrPastTheEndOfFile) {
  // Strided reads 0, 3, 6, 9: the next blocks are 12 and 15.
  for (const auto& [file_size, expected] : std::vector<std::pair<uint64_t, Blocks>>{
           {15 * kB + 1, {12, 15}},  // block 15 holds one byte of the file
           {15 * kB, {12}},          // the file ends where block 15 starts
           {12 * kB + 7, {12}},
           {12 * kB, {}},
           {10 * kB, {}}}) {
    FilePrefetcher prefetcher(Config(PrefetchMode::kIndividual));
    const PrefetchPlan plan = PlanReads(&prefetcher, {0, 3, 6, 9}, file_size);
    EXPECT_EQ(plan.blocks, expected) << "file size " << file_size;
  }
}

TEST(FilePrefetcherTest, SmallReadsLeaveTheirOwnBlockToTheRead) {
  // Sequential reads of a quarter block: the predictions start inside the block being read.
  FilePrefetcher prefetcher(Config(PrefetchMode::kIndividual));
  CachedSet none;
  FakeView view;
  PrefetchPlan plan;
  // Trusted a block ahead after one confirmation (a read is less than a block), two after two.
  for (uint64_t i = 0; i < 4; ++i) {
    plan = prefetcher.PlanRead({i * kB / 4, kB / 4}, (i + 1) * kB / 4, kLargeFile, view, none);
    if (i == 2) {
      EXPECT_EQ(plan.blocks, (Blocks{1}));
    }
  }
  EXPECT_EQ(plan.blocks, (Blocks{1, 2}));
  // Block-sized reads straddling two blocks: the third spans blocks 2 and 3, so block 3,
  // where the predictions start, is the read's own, and the next is planned; the fourth spans
  // 3 and 4, and the next two are.
  FilePrefetcher spans(Config(PrefetchMode::kIndividual));
  for (uint64_t i = 0; i < 4; ++i) {
    plan = spans.PlanRead({kB / 2 + i * kB, kB}, (i + 1) * kB, kLargeFile, view, none);
    if (i == 2) {
      EXPECT_EQ(plan.blocks, (Blocks{4}));
    }
  }
  EXPECT_EQ(plan.blocks, (Blocks{5, 6}));
}

TEST(FilePrefetcherTest, DepthGrowsWithUsedPrefetchesUpToTheMaximumAndShrinksWhenWasted) {
  constexpr uint64_t kMaxBlocks = 8;
  FilePrefetcher prefetcher(Config(PrefetchMode::kIndividual, kMaxBlocks));
  uint64_t next = 0;
  // Reads the next block of a sequential stream; returns how many blocks its plan names, after
  // checking they are exactly the ones right after it.
  auto planned_after_next_read = [&]() -> size_t {
    const PrefetchPlan plan = PlanReads(&prefetcher, {next});
    Blocks expected;
    for (uint64_t k = 1; k <= plan.blocks.size(); ++k) expected.push_back(next + k);
    EXPECT_EQ(plan.blocks, expected) << "after reading block " << next;
    ++next;
    return plan.blocks.size();
  };
  planned_after_next_read();
  planned_after_next_read();
  // Confirmed once, trusted one read ahead; then the depth, as each read confirms one more.
  EXPECT_EQ(planned_after_next_read(), 1u);
  EXPECT_EQ(planned_after_next_read(), 2u);

  for (uint64_t blocks = 3; blocks <= kMaxBlocks; ++blocks) {
    prefetcher.OnOutcome(PrefetchOutcome::kUsedInTime);
    EXPECT_EQ(prefetcher.depth_bytes(), blocks * kB);
    EXPECT_EQ(planned_after_next_read(), blocks);
  }
  for (int i = 0; i < 3; ++i) prefetcher.OnOutcome(PrefetchOutcome::kUsedInTime);
  EXPECT_EQ(prefetcher.depth_bytes(), kMaxBlocks * kB) << "grew past prefetch max_bytes";
  EXPECT_EQ(planned_after_next_read(), kMaxBlocks);

  // Wasted: half as deep each time, but never less than a block.
  for (uint64_t blocks : {4, 2, 1, 1}) {
    prefetcher.OnOutcome(PrefetchOutcome::kWasted);
    EXPECT_EQ(prefetcher.depth_bytes(), blocks * kB);
    EXPECT_EQ(planned_after_next_read(), blocks);
  }
  // Used after a wait: right but late, so deeper.
  prefetcher.OnOutcome(PrefetchOutcome::kUsedAfterWait);
  EXPECT_EQ(planned_after_next_read(), 2u);
  // Overtaken: a quarter less (rounded towards the deeper side).
  for (int i = 0; i < 6; ++i) prefetcher.OnOutcome(PrefetchOutcome::kUsedInTime);
  EXPECT_EQ(planned_after_next_read(), 8u);
  prefetcher.OnOutcome(PrefetchOutcome::kOvertaken);
  EXPECT_EQ(prefetcher.depth_bytes(), 6 * kB);
  EXPECT_EQ(planned_after_next_read(), 6u);
}

TEST(FilePrefetcherTest, ModeNonePlansNothingAndFetchesOnlyWhatIsAsked) {
  FilePrefetcher prefetcher(Config(PrefetchMode::kNone));
  FakeView view{0, 2};
  CachedSet none;
  for (uint64_t i = 0; i < 12; ++i) {
    const Access span = BlockRead(3 * i);
    const PrefetchPlan plan = prefetcher.PlanRead(span, (i + 1) * kB, kLargeFile, view, none);
    EXPECT_TRUE(plan.blocks.empty()) << "read " << i;
    EXPECT_EQ(plan.scope, FetchScope::kRequestedBytes) << "read " << i;
  }
  EXPECT_STREQ(prefetcher.predictor(), "none");
  prefetcher.OnViewChanged(false);
  EXPECT_TRUE(prefetcher.PlanAfterView(kLargeFile, view, none).empty());
  EXPECT_EQ(prefetcher.PlanRead(BlockRead(0), kB, kLargeFile, view, none).scope,
            FetchScope::kRequestedBytes);
  EXPECT_TRUE(view.calls.empty());
}

TEST(FilePrefetcherTest, ModeViewPlansWhatTheViewHoldsAfterTheRead) {
  FilePrefetcher prefetcher(Config(PrefetchMode::kView));
  FakeView view{0, 2};  // stream block s is file block 2s
  CachedSet cached;
  EXPECT_STREQ(prefetcher.predictor(), "view");

  // The very first read already has a plan: the view's next two blocks (stream 1 and 2).
  PrefetchPlan plan = prefetcher.PlanRead(BlockRead(0), kB, kLargeFile, view, cached);
  EXPECT_EQ(plan.blocks, (Blocks{2, 4}));
  EXPECT_EQ(plan.scope, FetchScope::kWholeBlock);
  ASSERT_EQ(view.calls.size(), 1u);
  EXPECT_EQ(view.calls[0], (std::pair<uint64_t, uint64_t>{kB, 2 * kB}));

  cached.blocks = {4};
  plan = prefetcher.PlanRead(BlockRead(2), 2 * kB, kLargeFile, view, cached);
  EXPECT_EQ(plan.blocks, (Blocks{6}));
  EXPECT_EQ(view.calls.back(), (std::pair<uint64_t, uint64_t>{2 * kB, 2 * kB}));

  // Not at or past the end of file.
  cached.blocks.clear();
  plan = prefetcher.PlanRead(BlockRead(4), 3 * kB, 8 * kB, view, cached);
  EXPECT_EQ(plan.blocks, (Blocks{6}));

  // A view with nothing after the read predicts nothing: misses fetch what they ask for.
  auto ends_here = [](uint64_t, uint64_t, std::vector<Access>*) {};
  plan = prefetcher.PlanRead(BlockRead(6), 4 * kB, kLargeFile, ends_here, cached);
  EXPECT_TRUE(plan.blocks.empty());
  EXPECT_EQ(plan.scope, FetchScope::kRequestedBytes);
}

TEST(FilePrefetcherTest, ModeAutoUsesTheViewOnlyWhenItIsNotContiguous) {
  FilePrefetcher prefetcher(Config(PrefetchMode::kAuto));
  FakeView view{0, 2};
  CachedSet none;
  // Contiguous (the default): the patterns decide, and one read shows none.
  PrefetchPlan plan = prefetcher.PlanRead(BlockRead(0), kB, kLargeFile, view, none);
  EXPECT_TRUE(plan.blocks.empty());
  EXPECT_EQ(plan.scope, FetchScope::kRequestedBytes);
  EXPECT_TRUE(view.calls.empty());

  prefetcher.OnViewChanged(false);
  EXPECT_STREQ(prefetcher.predictor(), "view");
  plan = prefetcher.PlanRead(BlockRead(0), kB, kLargeFile, view, none);
  EXPECT_EQ(plan.blocks, (Blocks{2, 4}));
  EXPECT_EQ(plan.scope, FetchScope::kWholeBlock);
  ASSERT_EQ(view.calls.size(), 1u);
  EXPECT_EQ(view.calls[0], (std::pair<uint64_t, uint64_t>{kB, 2 * kB}));

  prefetcher.OnViewChanged(true);
  EXPECT_STREQ(prefetcher.predictor(), "none");
  plan = prefetcher.PlanRead(BlockRead(0), kB, kLargeFile, view, none);
  EXPECT_TRUE(plan.blocks.empty());
  EXPECT_EQ(view.calls.size(), 1u) << "a contiguous view was consulted";
}

TEST(FilePrefetcherTest, PlanAfterViewNamesTheViewsFirstBlocks) {
  FakeView view{1, 3};  // stream block s is file block 1 + 3s
  CachedSet cached;

  FilePrefetcher by_view(Config(PrefetchMode::kView));
  EXPECT_EQ(by_view.PlanAfterView(kLargeFile, view, cached), (Blocks{1, 4}));
  ASSERT_EQ(view.calls.size(), 1u);
  EXPECT_EQ(view.calls[0], (std::pair<uint64_t, uint64_t>{0, 2 * kB}));
  cached.blocks = {1};
  EXPECT_EQ(by_view.PlanAfterView(kLargeFile, view, cached), (Blocks{4}));
  cached.blocks.clear();
  EXPECT_EQ(by_view.PlanAfterView(4 * kB, view, cached), (Blocks{1}));

  view.calls.clear();
  FilePrefetcher individual(Config(PrefetchMode::kIndividual));
  individual.OnViewChanged(false);
  EXPECT_TRUE(individual.PlanAfterView(kLargeFile, view, cached).empty());

  FilePrefetcher automatic(Config(PrefetchMode::kAuto));
  automatic.OnViewChanged(true);
  EXPECT_TRUE(automatic.PlanAfterView(kLargeFile, view, cached).empty());
  EXPECT_TRUE(view.calls.empty());
  automatic.OnViewChanged(false);
  EXPECT_EQ(automatic.PlanAfterView(kLargeFile, view, cached), (Blocks{1, 4}));
}

}  // namespace
}  // namespace stagio
