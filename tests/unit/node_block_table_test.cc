// The node cache's shared block table, used by several real processes at once (fork), as the
// ranks of a node use it: one anonymous shared mapping holds the table, a file on disk is the
// storage, and every process reaches it through its own backend, as each rank has its own open.
#include "node/node_block_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/stats.h"
#include "node/byte_ranges.h"
#include "node/frame_fetches.h"
#include "node/node_budget.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

constexpr uint64_t kBlock = 4096;

// Counters every process of a test sees: what storage was asked for.
struct SharedCounters {
  std::atomic<uint64_t> reads;
  std::atomic<uint64_t> reads_of_block[64];
  std::atomic<uint64_t> writes;
};

// Memory shared by the processes of one test (MAP_SHARED | MAP_ANONYMOUS, inherited by fork).
class SharedMemory {
 public:
  explicit SharedMemory(size_t bytes) : bytes_(bytes) {
    memory_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory_ == MAP_FAILED) std::abort();
  }
  ~SharedMemory() { munmap(memory_, bytes_); }
  void* get() const { return memory_; }

 private:
  size_t bytes_;
  void* memory_;
};

// Storage: a file on disk, read and written with pread/pwrite, as a rank's own open would.
class DiskBackend : public BlockBackend {
 public:
  DiskBackend(int fd, SharedCounters* counters) : fd_(fd), counters_(counters) {}

  Status ReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length, char* buffer,
                   uint64_t* bytes_read) override {
    counters_->reads.fetch_add(1);
    if (index < 64) counters_->reads_of_block[index].fetch_add(1);
    if (read_delay_.count() > 0) std::this_thread::sleep_for(read_delay_);
    if (die_in_read_) _exit(0);  // a rank killed while its fetch is on its way
    const ssize_t n = pread(fd_, buffer, length, static_cast<off_t>(index * kBlock + offset_in_block));
    if (n < 0) return Status::IOError("pread failed");
    *bytes_read = static_cast<uint64_t>(n);
    if (hold_ != nullptr) {
      // The bytes are read: hold them, on their way, until the test says.
      hold_->store(1);
      while (hold_->load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status::OK();
  }
  Status WriteRange(uint64_t index, uint64_t offset_in_block, const char* data,
                    uint64_t length) override {
    counters_->writes.fetch_add(1);
    int unheld = 0;
    if (write_hold_ != nullptr && write_hold_->compare_exchange_strong(unheld, 1)) {
      // The first write waits, on its way, until the test says.
      while (write_hold_->load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const ssize_t n = pwrite(fd_, data, length, static_cast<off_t>(index * kBlock + offset_in_block));
    return n == static_cast<ssize_t>(length) ? Status::OK() : Status::IOError("pwrite failed");
  }
  void RecordWriteBackError(const Status&) override {}
  FileStats* stats() override { return &stats_; }
  // Called with a shard lock held: a hook here dies holding it.
  void OnPrefetchOutcome(PrefetchOutcome) override {
    if (die_holding_lock_) _exit(0);
  }

  void set_read_delay(std::chrono::milliseconds delay) { read_delay_ = delay; }
  // Each read, once it has its bytes, sets *hold to 1 and returns only once it is 2.
  void hold_reads(std::atomic<int>* hold) { hold_ = hold; }
  // The first write from now on sets *hold from 0 to 1 and goes on only once it is 2.
  void hold_first_write(std::atomic<int>* hold) { write_hold_ = hold; }
  void die_in_read() { die_in_read_ = true; }
  void die_holding_lock() { die_holding_lock_ = true; }

 private:
  int fd_;
  SharedCounters* counters_;
  FileStats stats_;
  std::chrono::milliseconds read_delay_{0};
  bool die_in_read_ = false;
  bool die_holding_lock_ = false;
  std::atomic<int>* hold_ = nullptr;
  std::atomic<int>* write_hold_ = nullptr;
};

char PatternByte(uint64_t file_offset) { return static_cast<char>((file_offset * 131 + 7) % 251); }

class NodeBlockTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/stagio_node_table_XXXXXX";
    fd_ = mkstemp(path);
    ASSERT_GE(fd_, 0);
    unlink(path);
    std::vector<char> content(kFileBlocks * kBlock);
    for (size_t i = 0; i < content.size(); ++i) content[i] = PatternByte(i);
    ASSERT_EQ(pwrite(fd_, content.data(), content.size(), 0),
              static_cast<ssize_t>(content.size()));
    counters_ = new (counters_memory_.get()) SharedCounters();
  }
  void TearDown() override { close(fd_); }

  NodeBlockTable MakeTable(uint32_t frames, bool budgeted = false) {
    NodeBlockTable::Layout layout;
    layout.frame_size = kBlock;
    layout.frames = frames;
    layout.budgeted = budgeted;
    table_memories_.push_back(std::make_unique<SharedMemory>(NodeBlockTable::BytesFor(layout)));
    NodeBlockTable::Create(table_memories_.back()->get(), layout);
    return NodeBlockTable(table_memories_.back()->get());
  }
  DiskBackend Backend() { return DiskBackend(fd_, counters_); }

  // Runs body(process) in `count` forked processes; a process that fails an expectation exits
  // nonzero. Fails the test if any process fails or has not ended within `limit`.
  void RunProcesses(int count, const std::function<bool(int)>& body,
                    std::chrono::seconds limit = std::chrono::seconds(60)) {
    std::vector<pid_t> children;
    for (int process = 0; process < count; ++process) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        alarm(static_cast<unsigned>(limit.count()));  // a hang ends the child, and fails it
        _exit(body(process) ? 0 : 1);
      }
      children.push_back(pid);
    }
    for (pid_t child : children) {
      int status = 0;
      ASSERT_EQ(waitpid(child, &status, 0), child);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "a process failed or hung (status " << status << ")";
    }
  }

  std::string FileBytes(uint64_t offset, uint64_t length) {
    std::string bytes(length, '\0');
    EXPECT_EQ(pread(fd_, bytes.data(), length, static_cast<off_t>(offset)),
              static_cast<ssize_t>(length));
    return bytes;
  }

  static constexpr uint64_t kFileBlocks = 64;
  int fd_ = -1;
  SharedMemory counters_memory_{sizeof(SharedCounters)};
  SharedCounters* counters_ = nullptr;
  std::vector<std::unique_ptr<SharedMemory>> table_memories_;
};

// Releases held reads (sets *hold to 2) after `limit` if the test has not: a read that waits
// for a held one then fails its test instead of hanging it.
class HoldReleaser {
 public:
  HoldReleaser(std::atomic<int>* hold, std::chrono::seconds limit)
      : thread_([hold, limit] {
          const auto deadline = std::chrono::steady_clock::now() + limit;
          while (hold->load() != 2 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
          hold->store(2);
        }) {}
  ~HoldReleaser() { thread_.join(); }

 private:
  std::thread thread_;
};

bool MatchesPattern(const char* bytes, uint64_t file_offset, uint64_t length) {
  for (uint64_t i = 0; i < length; ++i) {
    if (bytes[i] != PatternByte(file_offset + i)) return false;
  }
  return true;
}

TEST(ByteRangesTest, MergesRefusesWhenFullAndListsGaps) {
  ByteRanges ranges;
  EXPECT_TRUE(ranges.Add(10, 20));
  EXPECT_TRUE(ranges.Add(20, 30));  // touching: merged
  EXPECT_EQ(ranges.count(), 1);
  EXPECT_TRUE(ranges.Covers(12, 30));
  EXPECT_FALSE(ranges.Covers(5, 12));
  for (uint32_t i = 0; i < ByteRanges::kCapacity - 1; ++i) {
    EXPECT_TRUE(ranges.Add(100 + 10 * i, 105 + 10 * i));
  }
  EXPECT_EQ(ranges.count(), ByteRanges::kCapacity);
  EXPECT_FALSE(ranges.Add(500, 501));  // a ninth range: refused, set unchanged
  EXPECT_EQ(ranges.count(), ByteRanges::kCapacity);
  EXPECT_TRUE(ranges.Add(0, 100));     // merges the first two: fits
  EXPECT_EQ(ranges.count(), ByteRanges::kCapacity - 1);
  EXPECT_TRUE(ranges.Add(600, 610));
  EXPECT_FALSE(ranges.Remove(101, 102));  // would split one range: refused
  EXPECT_TRUE(ranges.Remove(600, 610));   // removes a whole one: fine
  std::vector<std::pair<uint32_t, uint32_t>> gaps;
  ranges.ForEachGap(95, 125, [&](uint32_t b, uint32_t e) { gaps.emplace_back(b, e); });
  EXPECT_EQ(gaps, (std::vector<std::pair<uint32_t, uint32_t>>{{105, 110}, {115, 120}}));
}

TEST(ByteRangesTest, RemovesTheSmallestRangeApartFromTheKeptOnesAndTheNewOne) {
  ByteRanges valid, dirty;
  ASSERT_TRUE(valid.Add(0, 50));     // holds dirty bytes: stays
  ASSERT_TRUE(dirty.Add(10, 20));
  ASSERT_TRUE(valid.Add(100, 110));  // touches the new range [110, 120): stays
  ASSERT_TRUE(valid.Add(200, 230));
  ASSERT_TRUE(valid.Add(300, 320));  // the smallest apart: goes
  EXPECT_TRUE(valid.RemoveSmallestApartFrom(dirty, 110, 120));
  EXPECT_EQ(valid.count(), 3);
  EXPECT_FALSE(valid.Overlaps(300, 320));
  EXPECT_TRUE(valid.Covers(100, 110));
  EXPECT_TRUE(valid.RemoveSmallestApartFrom(dirty, 110, 120));  // then [200, 230)
  EXPECT_FALSE(valid.RemoveSmallestApartFrom(dirty, 110, 120)); // none left to give up
  EXPECT_EQ(valid.count(), 2);
}

TEST(ByteRangesTest, WidensARangeOverTheNearestGapsUntilItFits) {
  ByteRanges full;
  for (uint32_t i = 0; i < ByteRanges::kCapacity; ++i) ASSERT_TRUE(full.Add(200 * i, 200 * i + 100));
  // [1550, 1650): 50 bytes after the last range, [1400, 1500), and none after it.
  uint32_t begin = 1550, end = 1650;
  EXPECT_TRUE(full.WidenToFit(&begin, &end, 100));
  EXPECT_EQ(begin, 1500u);
  EXPECT_EQ(end, 1650u);
  ByteRanges trial = full;
  EXPECT_TRUE(trial.Add(begin, end));
  // A range that would need more than `max_extra` bytes of gaps does not fit.
  begin = 3000;
  end = 3010;
  EXPECT_FALSE(full.WidenToFit(&begin, &end, 10));
  // A range that fits as it is stays as it is.
  begin = 40;
  end = 150;
  EXPECT_TRUE(full.WidenToFit(&begin, &end, 0));
  EXPECT_EQ(begin, 40u);
  EXPECT_EQ(end, 150u);
}

// Two flushers at once (two ranks at close, or two write-back streams of one): the second
// leaves the frame the first is writing back and writes the other, and still returns only once
// the first's bytes are on storage.
TEST_F(NodeBlockTableTest, FlushersShareTheDirtyFramesAndEachWaitsForAll) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  ASSERT_TRUE(table.Write(storage, 0, 0, 5, "first").ok());
  ASSERT_TRUE(table.Write(storage, 1, 0, 6, "second").ok());
  const uint64_t writes_before = counters_->writes.load();
  std::atomic<int> hold{0};
  storage.hold_first_write(&hold);
  Status first_status, second_status;
  std::thread first([&] { first_status = table.FlushAll(storage); });
  ASSERT_TRUE(test_support::WaitUntil([&] { return hold.load() == 1; },
                                      std::chrono::seconds(10)));
  std::atomic<bool> second_done{false};
  std::thread second([&] {
    second_status = table.FlushAll(storage);
    second_done = true;
  });
  EXPECT_TRUE(test_support::WaitUntil(
      [&] { return counters_->writes.load() == writes_before + 2; }, std::chrono::seconds(10)))
      << "the second flusher waited for the frame on its way instead of writing the other";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(second_done.load()) << "a flush returned while a dirty frame was on its way";
  hold = 2;
  first.join();
  second.join();
  EXPECT_TRUE(first_status.ok()) << first_status.ToString();
  EXPECT_TRUE(second_status.ok()) << second_status.ToString();
  EXPECT_EQ(table.dirty_bytes(), 0u);
  EXPECT_EQ(FileBytes(0, 5), "first");
  EXPECT_EQ(FileBytes(kBlock, 6), "second");
  EXPECT_EQ(counters_->writes.load(), writes_before + 2) << "a frame was written back twice";
}

TEST_F(NodeBlockTableTest, MissThenHitReadsStorageOnce) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  std::vector<char> out(100);
  ASSERT_TRUE(table.Read(storage, 3, 50, 100, out.data()).ok());
  EXPECT_TRUE(MatchesPattern(out.data(), 3 * kBlock + 50, 100));
  ASSERT_TRUE(table.Read(storage, 3, 1000, 100, out.data()).ok());
  EXPECT_TRUE(MatchesPattern(out.data(), 3 * kBlock + 1000, 100));
  EXPECT_EQ(counters_->reads.load(), 1u);  // the whole block came with the first read
  EXPECT_EQ(storage.stats()->Get(Counter::cache_hits), 1u);
}

TEST_F(NodeBlockTableTest, RequestedBytesScopeFetchesOnlyTheGap) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  std::vector<char> out(100);
  ASSERT_TRUE(table.Read(storage, 5, 0, 100, out.data(), FetchScope::kRequestedBytes).ok());
  ASSERT_TRUE(table.Read(storage, 5, 200, 100, out.data(), FetchScope::kRequestedBytes).ok());
  EXPECT_TRUE(MatchesPattern(out.data(), 5 * kBlock + 200, 100));
  EXPECT_EQ(counters_->reads.load(), 2u);
  EXPECT_EQ(storage.stats()->Get(Counter::storage_read_bytes), 200u);
}

TEST_F(NodeBlockTableTest, ASpanAcrossBlocksCostsOneStorageRequest) {
  // Blocks 10 to 13: 11 cached, 12 with a write not yet on storage, 10 and 13 not held.
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  std::vector<char> out(3 * kBlock);
  ASSERT_TRUE(table.Read(storage, 11, 0, kBlock, out.data()).ok());  // cached: served from memory
  ASSERT_TRUE(table.Write(storage, 12, 10, 5, "hello").ok());          // newer than storage
  const uint64_t reads_before = counters_->reads.load();
  const uint64_t offset = 10 * kBlock + 100;
  ASSERT_TRUE(table.ReadSpan(storage, offset, 3 * kBlock, out.data()).ok());
  EXPECT_EQ(counters_->reads.load(), reads_before + 1);
  const uint64_t hello_at = 12 * kBlock + 10 - offset;
  EXPECT_EQ(std::string(out.data() + hello_at, 5), "hello");
  EXPECT_TRUE(MatchesPattern(out.data(), offset, hello_at));
  EXPECT_TRUE(MatchesPattern(out.data() + hello_at + 5, offset + hello_at + 5,
                             3 * kBlock - hello_at - 5));
  // The blocks the node held keep their bytes, now complete; those it did not hold were read
  // as without stagio and not kept (a read with no pattern), so they are read again.
  EXPECT_EQ(table.BlocksHeld(), 2u);
  EXPECT_TRUE(table.Contains(12, 0, kBlock));
  ASSERT_TRUE(table.ReadSpan(storage, offset, 3 * kBlock, out.data()).ok());
  EXPECT_EQ(counters_->reads.load(), reads_before + 2);
  EXPECT_EQ(std::string(out.data() + hello_at, 5), "hello");
}

TEST_F(NodeBlockTableTest, WritesAreReadBackAndFlushedAsDirtyRangesOnly) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  const std::string data(300, 'w');
  ASSERT_TRUE(table.Write(storage, 2, 100, data.size(), data.data()).ok());
  EXPECT_EQ(table.dirty_bytes(), 300u);
  EXPECT_EQ(counters_->reads.load(), 0u);  // a write never reads
  std::vector<char> out(600);
  ASSERT_TRUE(table.Read(storage, 2, 0, 600, out.data()).ok());
  EXPECT_TRUE(MatchesPattern(out.data(), 2 * kBlock, 100));
  EXPECT_EQ(std::string(out.data() + 100, 300), data);
  EXPECT_TRUE(MatchesPattern(out.data() + 400, 2 * kBlock + 400, 200));
  EXPECT_NE(FileBytes(2 * kBlock + 100, 300), data);  // still only in the cache
  ASSERT_TRUE(table.FlushAll(storage).ok());
  EXPECT_EQ(counters_->writes.load(), 1u);
  EXPECT_EQ(table.dirty_bytes(), 0u);
  EXPECT_EQ(FileBytes(2 * kBlock + 100, 300), data);
}

TEST_F(NodeBlockTableTest, ManyScatteredWritesToOneBlockAreAllKept) {
  // More dirty ranges than a frame holds: the frame is written back to make room, and every
  // byte written is on storage in the end.
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  for (uint64_t i = 0; i < 40; ++i) {
    const char byte = static_cast<char>('A' + i % 26);
    ASSERT_TRUE(table.Write(storage, 7, i * 100, 10, std::string(10, byte).data()).ok());
  }
  ASSERT_TRUE(table.FlushAll(storage).ok());
  for (uint64_t i = 0; i < 40; ++i) {
    EXPECT_EQ(FileBytes(7 * kBlock + i * 100, 10), std::string(10, static_cast<char>('A' + i % 26)));
    EXPECT_EQ(FileBytes(7 * kBlock + i * 100 + 10, 90)[0], PatternByte(7 * kBlock + i * 100 + 10));
  }
}

TEST_F(NodeBlockTableTest, BytesForgottenDuringAFetchAreNotRefilledWithItsOlderBytes) {
  // A prefetch reads block 0 and is held on its way. Meanwhile nine small writes to the block
  // fill its dirty ranges (the frame is written back) and then its valid ranges (the clean,
  // written-back bytes are forgotten). The prefetch's bytes predate the write-back: when it
  // lands, it must not fill the forgotten bytes with them.
  NodeBlockTable table = MakeTable(4);
  std::atomic<int> hold{0};
  std::thread prefetch([&] {
    DiskBackend io_storage = Backend();
    io_storage.hold_reads(&hold);
    table.Prefetch(io_storage, 0, 0, kBlock, table.epoch());
  });
  while (hold.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  DiskBackend storage = Backend();
  for (uint64_t i = 0; i < 9; ++i) {
    ASSERT_TRUE(table.Write(storage, 0, i * 100, 10, "ABCDEFGHIJ").ok());
  }
  hold.store(2);
  prefetch.join();
  std::vector<char> out(10);
  for (uint64_t i = 0; i < 9; ++i) {
    ASSERT_TRUE(table.Read(storage, 0, i * 100, 10, out.data()).ok());
    EXPECT_EQ(std::string(out.data(), 10), "ABCDEFGHIJ") << "write " << i;
  }
}

TEST_F(NodeBlockTableTest, DropCleanForgetsCleanBytesAndMakesPlannedPrefetchesStale) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  std::vector<char> out(10);
  ASSERT_TRUE(table.Read(storage, 1, 0, 10, out.data()).ok());
  const uint64_t planned = table.epoch();
  ASSERT_TRUE(table.Write(storage, 4, 0, 10, "0123456789").ok());
  table.DropClean(storage);
  EXPECT_EQ(table.BlocksHeld(), 1u);  // the dirty block stays
  EXPECT_EQ(table.Prefetch(storage, 9, 0, kBlock, planned), PrefetchResult::kStale);
  // Another process changed storage; the next read must see it.
  ASSERT_EQ(pwrite(fd_, "zzzzzzzzzz", 10, static_cast<off_t>(kBlock)), 10);
  ASSERT_TRUE(table.Read(storage, 1, 0, 10, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), 10), "zzzzzzzzzz");
  ASSERT_TRUE(table.Read(storage, 4, 0, 10, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), 10), "0123456789");
}

TEST_F(NodeBlockTableTest, BytesPastTheEndOfTheFileReadAsZeros) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  std::vector<char> out(kBlock, 'x');
  ASSERT_TRUE(table.Read(storage, kFileBlocks + 2, 0, kBlock, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), kBlock), std::string(kBlock, '\0'));
}

TEST_F(NodeBlockTableTest, ProcessesMissingTheSameBlockReadItOnce) {
  NodeBlockTable table = MakeTable(16);
  RunProcesses(4, [&](int) {
    DiskBackend storage = Backend();
    storage.set_read_delay(std::chrono::milliseconds(300));  // all arrive while it is in flight
    std::vector<char> out(kBlock);
    return table.Read(storage, 6, 0, kBlock, out.data()).ok() &&
           MatchesPattern(out.data(), 6 * kBlock, kBlock);
  });
  EXPECT_EQ(counters_->reads_of_block[6].load(), 1u);
}

TEST_F(NodeBlockTableTest, ConcurrentReadersAndEvictionReturnTheRightBytes) {
  // 8 frames for 64 blocks and 4 processes reading at random: blocks are evicted while other
  // processes read them, and every byte returned must still be right.
  NodeBlockTable table = MakeTable(8);
  RunProcesses(4, [&](int process) {
    DiskBackend storage = Backend();
    std::mt19937_64 random(process + 1);
    std::vector<char> out(kBlock);
    for (int i = 0; i < 20000; ++i) {
      const uint64_t block = random() % kFileBlocks;
      const uint64_t offset = random() % kBlock;
      const uint64_t length = 1 + random() % (kBlock - offset);
      const FetchScope scope = random() % 2 ? FetchScope::kWholeBlock : FetchScope::kRequestedBytes;
      if (!table.Read(storage, block, offset, length, out.data(), scope).ok()) return false;
      if (!MatchesPattern(out.data(), block * kBlock + offset, length)) return false;
    }
    return true;
  });
  EXPECT_LE(table.BlocksHeld(), 8u);
}

TEST_F(NodeBlockTableTest, WriteBackWhileOthersWriteTheSameBlocksLosesNoWrite) {
  // Three writers share eight blocks, each writing its own slice of every block, 8 bytes at a
  // time, each write to bytes no other write touches. A flusher writes back all the while and a
  // reader of other blocks forces evictions (4 frames), so writes land while their frame is
  // being written back. Every write must reach storage, and each writer must read its own
  // writes back at once.
  NodeBlockTable table = MakeTable(4);
  constexpr int kWriters = 3;
  constexpr uint64_t kSlice = 1000;
  constexpr uint64_t kBlocks = 8;
  constexpr uint64_t kWritesPerWriter = kBlocks * (kSlice / 8);
  auto value_of = [](int writer, uint64_t write) {
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>('A' + (writer * 7 + write + i) % 50);
    return std::string(bytes, 8);
  };
  auto offset_of = [](int writer, uint64_t write) { return writer * kSlice + (write / kBlocks) * 8; };
  RunProcesses(kWriters + 2, [&](int process) {
    DiskBackend storage = Backend();
    std::vector<char> out(kBlock);
    if (process == kWriters) {  // the flusher
      for (int i = 0; i < 5000; ++i) {
        if (!table.FlushOldestUntil(storage, 0).ok()) return false;
      }
      return true;
    }
    if (process == kWriters + 1) {  // eviction pressure
      for (int i = 0; i < 20000; ++i) {
        if (!table.Read(storage, 10 + i % 40, 0, kBlock, out.data()).ok()) return false;
      }
      return true;
    }
    for (uint64_t write = 0; write < kWritesPerWriter; ++write) {
      const uint64_t block = write % kBlocks;
      const std::string bytes = value_of(process, write);
      const uint64_t offset = offset_of(process, write);
      if (!table.Write(storage, block, offset, 8, bytes.data()).ok()) return false;
      if (!table.Read(storage, block, offset, 8, out.data()).ok()) return false;
      if (std::string(out.data(), 8) != bytes) return false;
    }
    return true;
  });
  DiskBackend storage = Backend();
  ASSERT_TRUE(table.FlushAll(storage).ok());
  int lost = 0;
  for (int writer = 0; writer < kWriters; ++writer) {
    for (uint64_t write = 0; write < kWritesPerWriter; ++write) {
      const uint64_t block = write % kBlocks;
      if (FileBytes(block * kBlock + offset_of(writer, write), 8) != value_of(writer, write)) {
        ++lost;
      }
    }
  }
  EXPECT_EQ(lost, 0);
}

TEST_F(NodeBlockTableTest, AFetchWhoseProcessDiedIsTakenOver) {
  NodeBlockTable table = MakeTable(16);
  const pid_t dying = fork();
  ASSERT_GE(dying, 0);
  if (dying == 0) {
    DiskBackend storage = Backend();
    storage.die_in_read();
    std::vector<char> out(kBlock);
    table.Read(storage, 8, 0, kBlock, out.data());
    _exit(1);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(dying, &status, 0), dying);
  RunProcesses(2, [&](int) {
    DiskBackend storage = Backend();
    std::vector<char> out(kBlock);
    return table.Read(storage, 8, 0, kBlock, out.data()).ok() &&
           MatchesPattern(out.data(), 8 * kBlock, kBlock);
  }, std::chrono::seconds(20));
  EXPECT_FALSE(table.broken());
}

TEST_F(NodeBlockTableTest, AProcessThatDiesHoldingALockDoesNotHangTheOthers) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend parent_storage = Backend();
  ASSERT_EQ(table.Prefetch(parent_storage, 9, 0, kBlock, table.epoch()), PrefetchResult::kFetched);
  const pid_t dying = fork();
  ASSERT_GE(dying, 0);
  if (dying == 0) {
    DiskBackend storage = Backend();
    storage.die_holding_lock();  // the prefetched block's first use reports under the lock
    std::vector<char> out(10);
    table.Read(storage, 9, 0, 10, out.data());
    _exit(1);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(dying, &status, 0), dying);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child did not die as planned";
  // Every later call ends, with an error, instead of waiting forever.
  RunProcesses(2, [&](int) {
    DiskBackend storage = Backend();
    std::vector<char> out(10);
    const Status read = table.Read(storage, 9, 0, 10, out.data());
    return !read.ok() && !table.FlushAll(storage).ok();
  }, std::chrono::seconds(20));
  EXPECT_TRUE(table.broken());
}

}  // namespace
}  // namespace stagio
namespace stagio {
namespace {
TEST_F(NodeBlockTableTest, ReadsSeeTheirOwnWritesWhilePrefetchAndWriteBackRun) {
  // One writer and reader (Read, ReadSpan) against a byte model, with two frames, while another
  // thread writes back and prefetches with slow storage reads: writes land, are written back
  // and their clean bytes are given up while prefetches of their block are on their way, and
  // every read must still return the newest bytes.
  NodeBlockTable table = MakeTable(2);
  DiskBackend storage = Backend();
  // What a rank's I/O thread does meanwhile: write back and prefetch.
  std::atomic<bool> stop{false};
  std::thread io([&] {
    DiskBackend io_storage = Backend();
    io_storage.set_read_delay(std::chrono::milliseconds(1));  // prefetches long in flight
    std::mt19937_64 io_random(3);
    while (!stop.load()) {
      table.FlushOldestUntil(io_storage, 0);
      table.Prefetch(io_storage, io_random() % 4, 0, kBlock, table.epoch());
    }
  });
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Joiner() { stop = true; thread.join(); }
  } joiner{stop, io};
  std::vector<char> model(kFileBlocks * kBlock);
  for (size_t i = 0; i < model.size(); ++i) model[i] = PatternByte(i);
  std::mt19937_64 random(7);
  std::vector<char> out(3 * kBlock);
  for (int op = 0; op < 8000; ++op) {
    // Four blocks, so that the other thread's prefetches are often of the block written.
    const uint64_t offset = random() % kBlock;
    const uint64_t length = 1 + random() % (random() % 4 == 0 ? 3 * kBlock : 200);
    const int kind = static_cast<int>(random() % 4);
    if (kind == 0) {
      const uint64_t index = offset / kBlock;
      const uint64_t in_block = offset % kBlock;
      const uint64_t n = std::min<uint64_t>(length, kBlock - in_block);
      std::string bytes(n, '\0');
      for (auto& b : bytes) b = static_cast<char>(random());
      ASSERT_TRUE(table.Write(storage, index, in_block, n, bytes.data()).ok());
      std::memcpy(model.data() + offset, bytes.data(), n);
    } else if (kind == 1) {
      ASSERT_TRUE(table.ReadSpan(storage, offset, length, out.data()).ok());
      ASSERT_EQ(std::memcmp(out.data(), model.data() + offset, length), 0) << "op " << op;
    } else if (kind == 2) {
      const uint64_t index = offset / kBlock;
      const uint64_t in_block = offset % kBlock;
      const uint64_t n = std::min<uint64_t>(length, kBlock - in_block);
      ASSERT_TRUE(table.Read(storage, index, in_block, n, out.data(),
                             random() % 2 ? FetchScope::kWholeBlock : FetchScope::kRequestedBytes)
                      .ok());
      ASSERT_EQ(std::memcmp(out.data(), model.data() + offset, n), 0) << "op " << op;
    } else if (random() % 50 == 0) {
      ASSERT_TRUE(table.FlushAll(storage).ok());
      table.DropClean(storage);
    }
  }
}
// Pages of a shared mapping that are in memory now.
size_t ResidentPages(const SharedMemory& memory, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((bytes + page - 1) / page);
  if (mincore(memory.get(), bytes, resident.data()) != 0) return SIZE_MAX;
  size_t count = 0;
  for (unsigned char bits : resident) count += bits & 1;
  return count;
}

bool ReadBlocks(NodeBlockTable& table, BlockBackend& storage, uint64_t first, uint64_t last) {
  std::vector<char> bytes(kBlock);
  for (uint64_t index = first; index < last; ++index) {
    if (!table.Read(storage, index, 0, kBlock, bytes.data()).ok()) return false;
    if (!MatchesPattern(bytes.data(), index * kBlock, kBlock)) return false;
  }
  return true;
}

// Two files' tables on one node, each as large as the node's budget (6 frames; under 8 frames
// a table has one shard, so which frames a block may use does not depend on its hash).
TEST_F(NodeBlockTableTest, TheTablesOfANodeKeepToOneBudgetAndALaterOneGetsItsShare) {
  if (sysconf(_SC_PAGESIZE) > static_cast<long>(kBlock)) {
    GTEST_SKIP() << "a block smaller than a page gives no page back";
  }
  SharedMemory account_memory(sizeof(NodeBudgetState));
  auto budget = std::make_shared<NodeBudget>(new (account_memory.get()) NodeBudgetState());
  constexpr uint64_t kFrames = 6, kLimit = kFrames * kBlock;
  DiskBackend storage = Backend();

  NodeBlockTable first = MakeTable(kFrames, /*budgeted=*/true);
  first.ShareBudget(budget);
  budget->TableOpened();
  ASSERT_TRUE(ReadBlocks(first, storage, 0, kFrames));
  EXPECT_EQ(first.held_bytes(), kLimit);
  EXPECT_EQ(budget->held_bytes(), kLimit);
  const size_t resident_when_full = ResidentPages(*table_memories_[0], NodeBlockTable::BytesFor(
                                                      {kBlock, static_cast<uint32_t>(kFrames)}));

  // The node is full, yet a second file gets its fair share (half) and works within it.
  NodeBlockTable second = MakeTable(kFrames, /*budgeted=*/true);
  second.ShareBudget(budget);
  budget->TableOpened();
  ASSERT_TRUE(ReadBlocks(second, storage, 0, kFrames));
  EXPECT_EQ(second.held_bytes(), kLimit / 2);
  EXPECT_EQ(budget->held_bytes(), kLimit + kLimit / 2);

  // The first, over its share of a node over budget, gives pages back as it evicts, until the
  // node is within budget again; its memory really goes.
  ASSERT_TRUE(ReadBlocks(first, storage, kFrames, 3 * kFrames));
  EXPECT_EQ(first.held_bytes(), kLimit / 2);
  EXPECT_EQ(budget->held_bytes(), kLimit);
  const size_t resident_after = ResidentPages(*table_memories_[0], NodeBlockTable::BytesFor(
                                                  {kBlock, static_cast<uint32_t>(kFrames)}));
  const size_t pages_per_frame = kBlock / static_cast<size_t>(sysconf(_SC_PAGESIZE));
  EXPECT_LE(resident_after + (kFrames / 2) * pages_per_frame, resident_when_full);

  // Once the second file is closed (its last view credits what was charged for it), the first
  // may grow to the whole budget again.
  const std::optional<uint64_t> charged = second.RemoveView();
  ASSERT_TRUE(charged.has_value());
  EXPECT_EQ(*charged, kLimit / 2);
  budget->TableClosed(*charged);
  ASSERT_TRUE(ReadBlocks(first, storage, 3 * kFrames, 5 * kFrames));
  EXPECT_EQ(first.held_bytes(), kLimit);
  EXPECT_EQ(budget->held_bytes(), kLimit);
  EXPECT_EQ(budget->tables(), 1u);
}

TEST_F(NodeBlockTableTest, ATableMadeWithoutABudgetFillsAllItsFramesAndChargesNone) {
  SharedMemory account_memory(sizeof(NodeBudgetState));
  auto budget = std::make_shared<NodeBudget>(new (account_memory.get()) NodeBudgetState());
  NodeBlockTable table = MakeTable(6);
  table.ShareBudget(budget);  // ignored: the table's maker had none
  DiskBackend storage = Backend();
  ASSERT_TRUE(ReadBlocks(table, storage, 0, 12));
  EXPECT_EQ(table.held_bytes(), 6 * kBlock);
  EXPECT_EQ(table.BlocksHeld(), 6u);
  EXPECT_EQ(budget->held_bytes(), 0u);
  EXPECT_EQ(table.RemoveView(), std::optional<uint64_t>(0));
}

// Node-mates charge the table's frames to the budget each through its own view; only the last
// view to go gets what they charged, to credit it, however the views come and go.
TEST_F(NodeBlockTableTest, TheLastViewOfATableGetsWhatEveryProcessChargedForIt) {
  SharedMemory account_memory(sizeof(NodeBudgetState));
  auto* state = new (account_memory.get()) NodeBudgetState();
  NodeBlockTable table = MakeTable(8, /*budgeted=*/true);
  table.AddView();  // the node-mate's
  RunProcesses(1, [&](int) {
    NodeBlockTable view(table_memories_[0]->get());
    view.ShareBudget(std::make_shared<NodeBudget>(state));
    DiskBackend storage = Backend();
    // The node-mate fills 3 frames and goes first: it gets nothing to credit.
    return ReadBlocks(view, storage, 0, 3) && !view.RemoveView().has_value();
  });
  auto budget = std::make_shared<NodeBudget>(state);
  table.ShareBudget(budget);
  DiskBackend storage = Backend();
  ASSERT_TRUE(ReadBlocks(table, storage, 3, 5));
  EXPECT_EQ(budget->held_bytes(), 5 * kBlock);
  EXPECT_EQ(table.RemoveView(), std::optional<uint64_t>(5 * kBlock));
}

TEST_F(NodeBlockTableTest, ProcessesAttachingByNameShareOneAccountAndTheLastRemovesIt) {
  const std::string name = NodeBudget::NameFor("test" + std::to_string(getpid()), 3);
  Status status;
  std::shared_ptr<NodeBudget> mine = NodeBudget::Attach(name, &status);
  ASSERT_TRUE(mine) << status.ToString();
  mine->TableOpened();
  // Another process of the node charges through the same name.
  RunProcesses(1, [&](int) {
    Status attach;
    std::shared_ptr<NodeBudget> theirs = NodeBudget::Attach(name, &attach);
    return theirs && theirs->tables() == 1 && theirs->TryTake(100, 150, 0) &&
           // Over the limit and over its share (the whole limit, one table): refused.
           !theirs->TryTake(100, 150, 100) && theirs->ShouldGiveBack(50, 100);
  });
  EXPECT_EQ(mine->held_bytes(), 100u);
  mine->Give(1000);  // never below zero
  EXPECT_EQ(mine->held_bytes(), 0u);
  mine.reset();
  EXPECT_LT(shm_open(name.c_str(), O_RDWR, 0), 0) << "the last process removes the name";
  // A process that comes after makes a new account.
  std::shared_ptr<NodeBudget> later = NodeBudget::Attach(name, &status);
  ASSERT_TRUE(later) << status.ToString();
  EXPECT_EQ(later->tables(), 0u);
}

}  // namespace
}  // namespace stagio

namespace stagio {
namespace {

// The direct path writes storage around the table: the bytes it writes are forgotten first,
// dirty or not, so that no write-back of theirs can land after the new ones.
TEST_F(NodeBlockTableTest, ForgottenDirtyBytesNeverReachStorage) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  ASSERT_TRUE(table.Write(storage, 3, 0, 30, std::string(30, 'o').data()).ok());
  ASSERT_TRUE(table.Forget(storage, 3, 10, 10).ok());
  EXPECT_EQ(table.dirty_bytes(), 20u);
  ASSERT_EQ(pwrite(fd_, "nnnnnnnnnn", 10, static_cast<off_t>(3 * kBlock + 10)), 10);
  ASSERT_TRUE(table.FlushAll(storage).ok());
  const std::string expected = std::string(10, 'o') + std::string(10, 'n') + std::string(10, 'o');
  EXPECT_EQ(FileBytes(3 * kBlock, 30), expected);
  std::vector<char> out(30);
  ASSERT_TRUE(table.Read(storage, 3, 0, 30, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), 30), expected);
}

TEST_F(NodeBlockTableTest, ForgettingThatWouldSplitAFullSetWritesTheFrameBackFirst) {
  NodeBlockTable table = MakeTable(16);
  DiskBackend storage = Backend();
  // As many separate dirty ranges as a frame holds; forgetting the middle of one would need
  // one more.
  for (uint64_t i = 0; i < ByteRanges::kCapacity; ++i) {
    ASSERT_TRUE(table.Write(storage, 5, i * 100, 30, std::string(30, 'o').data()).ok());
  }
  ASSERT_TRUE(table.Forget(storage, 5, 10, 10).ok());
  ASSERT_EQ(pwrite(fd_, "nnnnnnnnnn", 10, static_cast<off_t>(5 * kBlock + 10)), 10);
  ASSERT_TRUE(table.FlushAll(storage).ok());
  EXPECT_EQ(FileBytes(5 * kBlock, 30),
            std::string(10, 'o') + std::string(10, 'n') + std::string(10, 'o'));
  EXPECT_EQ(FileBytes(5 * kBlock + 100, 30), std::string(30, 'o'));
}

TEST_F(NodeBlockTableTest, AFetchOnItsWayWhenItsBytesAreForgottenLeavesNothing) {
  NodeBlockTable table = MakeTable(4);
  std::atomic<int> hold{0};
  std::thread prefetch([&] {
    DiskBackend io_storage = Backend();
    io_storage.hold_reads(&hold);
    table.Prefetch(io_storage, 6, 0, kBlock, table.epoch());
  });
  while (hold.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  DiskBackend storage = Backend();
  ASSERT_TRUE(table.Forget(storage, 6, 0, 10).ok());
  ASSERT_EQ(pwrite(fd_, "nnnnnnnnnn", 10, static_cast<off_t>(6 * kBlock)), 10);
  hold.store(2);
  prefetch.join();
  std::vector<char> out(10);
  ASSERT_TRUE(table.Read(storage, 6, 0, 10, out.data()).ok());
  EXPECT_EQ(std::string(out.data(), 10), "nnnnnnnnnn");
}

// A block holds many small reads: a read must not wait for a fetch of other bytes of its
// block (another rank's, or a prefetch ahead), and fetches of different bytes run side by side.
TEST_F(NodeBlockTableTest, AReadDoesNotWaitForAFetchOfOtherBytesOfItsBlock) {
  NodeBlockTable table = MakeTable(4);
  DiskBackend storage = Backend();
  ASSERT_TRUE(table.Write(storage, 2, 2050, 4, "WXYZ").ok());  // dirty, read back below
  std::atomic<int> hold{0};
  std::thread prefetch([&] {
    DiskBackend io_storage = Backend();
    io_storage.hold_reads(&hold);
    table.Prefetch(io_storage, 2, 0, 100, table.epoch());
  });
  HoldReleaser releaser(&hold, std::chrono::seconds(10));
  while (hold.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(table.Contains(2, 10, 90));     // on its way
  EXPECT_FALSE(table.Contains(2, 10, 190));   // partly not
  std::vector<char> out(100);
  ASSERT_TRUE(table.Read(storage, 2, 2000, 100, out.data(), FetchScope::kRequestedBytes).ok());
  EXPECT_EQ(hold.load(), 1) << "the read waited for the prefetch of other bytes";
  EXPECT_TRUE(MatchesPattern(out.data(), 2 * kBlock + 2000, 50));
  EXPECT_EQ(std::string(out.data() + 50, 4), "WXYZ");
  EXPECT_TRUE(MatchesPattern(out.data() + 54, 2 * kBlock + 2054, 46));
  // A second prefetch of other bytes runs beside the first and is kept.
  ASSERT_EQ(table.Prefetch(storage, 2, 3000, 3100, table.epoch()), PrefetchResult::kFetched);
  EXPECT_EQ(hold.load(), 1);
  hold.store(2);
  prefetch.join();
  const uint64_t reads = counters_->reads.load();
  ASSERT_TRUE(table.Read(storage, 2, 0, 100, out.data()).ok());
  EXPECT_TRUE(MatchesPattern(out.data(), 2 * kBlock, 100));
  ASSERT_TRUE(table.Read(storage, 2, 3000, 100, out.data()).ok());
  EXPECT_TRUE(MatchesPattern(out.data(), 2 * kBlock + 3000, 100));
  EXPECT_EQ(counters_->reads.load(), reads) << "both prefetches' bytes were kept";
}

TEST_F(NodeBlockTableTest, AReadFindingEveryFetchSlotTakenReadsBesideThem) {
  NodeBlockTable table = MakeTable(4);
  DiskBackend storage = Backend();
  ASSERT_TRUE(table.Write(storage, 2, 2050, 4, "WXYZ").ok());
  std::atomic<int> hold{0};
  std::atomic<int> started{0};
  std::vector<std::thread> prefetches;
  for (int i = 0; i < FrameFetches::kSlots; ++i) {
    prefetches.emplace_back([&, i] {
      DiskBackend io_storage = Backend();
      io_storage.hold_reads(&hold);
      started.fetch_add(1);
      table.Prefetch(io_storage, 2, 100 * i, 100 * i + 50, table.epoch());
    });
  }
  HoldReleaser releaser(&hold, std::chrono::seconds(10));
  // Every prefetch has claimed its slot once its read holds (the first sets hold to 1; the
  // others are on their way once the frame shows all their bytes arriving).
  while (started.load() != FrameFetches::kSlots || hold.load() != 1 ||
         !table.Contains(2, 300, 350) || !table.Contains(2, 0, 50) ||
         !table.Contains(2, 100, 150) || !table.Contains(2, 200, 250)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<char> out(100);
  ASSERT_TRUE(table.Read(storage, 2, 2000, 100, out.data(), FetchScope::kRequestedBytes).ok());
  EXPECT_TRUE(MatchesPattern(out.data(), 2 * kBlock + 2000, 50));
  EXPECT_EQ(std::string(out.data() + 50, 4), "WXYZ");
  EXPECT_TRUE(MatchesPattern(out.data() + 54, 2 * kBlock + 2054, 46));
  EXPECT_EQ(hold.load(), 1) << "the read waited for the prefetches";
  hold.store(2);
  for (std::thread& prefetch : prefetches) prefetch.join();
  EXPECT_FALSE(table.Contains(2, 2000, 2050)) << "bytes read beside the fetches are not kept";
}

// A block written in chunks while its first chunks are on their way to storage: each chunk
// goes out once, not again with every later one.
TEST_F(NodeBlockTableTest, AWriteDuringAWriteBackLeavesOnlyItsOwnBytesDirty) {
  NodeBlockTable table = MakeTable(4);
  DiskBackend storage = Backend();
  ASSERT_TRUE(table.Write(storage, 5, 0, 4, "aaaa").ok());
  std::atomic<int> hold{0};
  DiskBackend flusher_storage = Backend();
  flusher_storage.hold_first_write(&hold);
  Status flushed;
  std::thread flusher([&] { flushed = table.FlushAll(flusher_storage); });
  ASSERT_TRUE(test_support::WaitUntil([&] { return hold.load() == 1; },
                                      std::chrono::seconds(10)));
  ASSERT_TRUE(table.Write(storage, 5, 4, 4, "bbbb").ok());  // the next chunk, beside it
  ASSERT_TRUE(table.Write(storage, 5, 2, 1, "c").ok());     // and over a byte on its way
  hold.store(2);
  flusher.join();
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  // FlushAll's second pass wrote what came during its first: the 5 bytes written meanwhile,
  // not the whole 8 again.
  EXPECT_EQ(flusher_storage.stats()->Get(Counter::dirty_bytes_flushed), 4u + 5u);
  EXPECT_EQ(FileBytes(5 * kBlock, 8), "aacabbbb");
  EXPECT_EQ(table.dirty_bytes(), 0u);
}

TEST_F(NodeBlockTableTest, ManySmallPrefetchesIntoABlockKeepTheLatest) {
  // Twelve 10-byte prefetches 100 bytes apart: more ranges than a frame keeps, with gaps too
  // long to read over. The oldest are given up one at a time, not all at once.
  NodeBlockTable table = MakeTable(4);
  DiskBackend storage = Backend();
  constexpr int kPrefetches = 12;
  for (int i = 0; i < kPrefetches; ++i) {
    ASSERT_EQ(table.Prefetch(storage, 1, 100 * i, 100 * i + 10, table.epoch()),
              PrefetchResult::kFetched);
  }
  const uint64_t reads = counters_->reads.load();
  std::vector<char> out(10);
  for (int i = kPrefetches - ByteRanges::kCapacity; i < kPrefetches; ++i) {
    ASSERT_TRUE(table.Read(storage, 1, 100 * i, 10, out.data()).ok());
    EXPECT_TRUE(MatchesPattern(out.data(), kBlock + 100 * i, 10));
  }
  EXPECT_EQ(counters_->reads.load(), reads) << "the latest prefetches were forgotten";
}

TEST_F(NodeBlockTableTest, APrefetchNextToAFullSetReadsOverAShortGapToKeepEveryRange) {
  // Eight 100-byte ranges 200 bytes apart fill the set; a ninth 100 bytes after the last is
  // read with the gap before it, so that it merges and nothing is forgotten.
  NodeBlockTable table = MakeTable(4);
  DiskBackend storage = Backend();
  for (uint32_t i = 0; i <= ByteRanges::kCapacity; ++i) {
    ASSERT_EQ(table.Prefetch(storage, 3, 200 * i, 200 * i + 100, table.epoch()),
              PrefetchResult::kFetched);
  }
  EXPECT_EQ(storage.stats()->Get(Counter::storage_read_bytes),
            ByteRanges::kCapacity * 100u + 200u);
  const uint64_t reads = counters_->reads.load();
  std::vector<char> out(100);
  for (uint32_t i = 0; i <= ByteRanges::kCapacity; ++i) {
    ASSERT_TRUE(table.Read(storage, 3, 200 * i, 100, out.data()).ok());
    EXPECT_TRUE(MatchesPattern(out.data(), 3 * kBlock + 200 * i, 100));
  }
  EXPECT_EQ(counters_->reads.load(), reads);
}

}  // namespace
}  // namespace stagio
