// The segment store as a whole, with a clock moved by hand: idle-time grouping and its yield
// to demand, reads served from segments (whole and partial), write invalidation, files changed
// behind the daemon, corrupt segments, a full store, and a segment file that cannot be
// written. Every read is compared with the file's bytes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "segstore/segment_store.h"
#include "segstore/segmented_file.h"
#include "support/test_helpers.h"

namespace stagio {
namespace segstore {
namespace {

constexpr uint64_t kSegment = 4096;
constexpr uint64_t kPiece = 1000;
constexpr uint64_t kFileBytes = 64 * 1024;

class FakeClock : public Clock {
 public:
  double Seconds() override { return now; }
  double now = 0;
};

// A storage file that runs `hook` before its first read (a client request arriving while the
// grouping reads).
class HookedFile : public DriverFile {
 public:
  HookedFile(std::unique_ptr<DriverFile> file, std::function<void()> hook)
      : file_(std::move(file)), hook_(std::move(hook)) {}
  Status ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) override {
    if (hook_) std::exchange(hook_, nullptr)();
    return file_->ReadAt(offset, buffer, length, bytes_read);
  }
  Status WriteAt(uint64_t offset, const void* buffer, size_t length) override {
    return file_->WriteAt(offset, buffer, length);
  }
  Status GetSize(uint64_t* size) override { return file_->GetSize(size); }
  Status Truncate(uint64_t size) override { return file_->Truncate(size); }
  Status Sync() override { return file_->Sync(); }
  std::optional<FileVersion> Version() override { return file_->Version(); }
  const std::string& path() const override { return file_->path(); }

 private:
  std::unique_ptr<DriverFile> file_;
  std::function<void()> hook_;
};

class SegmentStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/stagio-segstore-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    ASSERT_EQ(::mkdir((dir_ + "/segments").c_str(), 0700), 0);
    path_ = dir_ + "/data";
    content_.resize(kFileBytes);
    for (uint64_t i = 0; i < kFileBytes; ++i) {
      content_[i] = static_cast<char>((i * 131 + i / 4096) % 251);
    }
    const int fd = ::open(path_.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    ASSERT_EQ(::pwrite(fd, content_.data(), content_.size(), 0), static_cast<ssize_t>(kFileBytes));
    ::close(fd);
    struct stat info {};
    ASSERT_EQ(::stat(path_.c_str(), &info), 0);
    key_ = FileKey{static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino)};
    options_.location = dir_ + "/segments";
    options_.size = 8 * kSegment;
    options_.segment_size = kSegment;
    options_.cache_size = 2 * kSegment;
    options_.idle_seconds = 5;
  }
  void TearDown() override {
    store_.reset();
    file_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  // The store over the data file, opened through a SegmentedFile as the daemon does.
  void MakeStore() {
    FileOpener opener = [this](const FileKey&, const std::string& path,
                               std::unique_ptr<DriverFile>* opened) {
      std::unique_ptr<DriverFile> file;
      Status status = PosixDriver()->Open(path, OpenAccess::kReadOnly, &file);
      if (status.ok()) *opened = std::make_unique<HookedFile>(std::move(file), on_group_read_);
      on_group_read_ = nullptr;
      return status;
    };
    ASSERT_OK(SegmentStore::Create(options_, opener,
                                   [this](const std::string& line) { log_.push_back(line); },
                                   &clock_, &store_));
    std::unique_ptr<DriverFile> storage;
    ASSERT_OK(PosixDriver()->Open(path_, OpenAccess::kReadWrite, &storage));
    file_ = std::make_unique<SegmentedFile>(std::move(storage), store_.get(), key_);
  }

  std::string Read(uint64_t offset, uint64_t length) {
    std::string data(length, '\0');
    size_t got = 0;
    Status status = file_->ReadAt(offset, data.data(), length, &got);
    EXPECT_TRUE(status.ok()) << status.message();
    data.resize(got);
    return data;
  }
  std::string Expected(uint64_t offset, uint64_t length) const {
    if (offset >= content_.size()) return "";
    return content_.substr(offset, length);
  }
  // Reads the scattered pieces `starts` (in units of 4 KiB), each checked.
  void ReadPieces(const std::vector<uint64_t>& starts) {
    for (uint64_t start : starts) {
      EXPECT_EQ(Read(start * 4096 + 100, kPiece), Expected(start * 4096 + 100, kPiece));
    }
  }
  // Storage has been idle long enough: one grouping run.
  bool GroupAfterIdle() {
    clock_.now += options_.idle_seconds;
    return store_->GroupIfIdle();
  }
  void WriteBehind(uint64_t offset, const std::string& bytes) {
    const int fd = ::open(path_.c_str(), O_WRONLY);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(bytes.size()));
    // A modification time the daemon has not seen, however coarse the file system's clock.
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 678}};
    ASSERT_EQ(::futimens(fd, times), 0);
    ::close(fd);
    content_.replace(offset, bytes.size(), bytes);
  }
  const SegmentStoreStats& stats() const { return store_->stats(); }

  std::string dir_, path_, content_;
  FileKey key_;
  SegmentStoreOptions options_;
  FakeClock clock_;
  std::unique_ptr<SegmentStore> store_;
  std::unique_ptr<DriverFile> file_;
  std::function<void()> on_group_read_;
  std::vector<std::string> log_;
};

TEST_F(SegmentStoreTest, GroupingWaitsForTheIdleThreshold) {
  MakeStore();
  ReadPieces({9, 2, 14, 5});
  EXPECT_FALSE(store_->GroupIfIdle()) << "storage was just used";
  clock_.now = 4.9;
  EXPECT_FALSE(store_->GroupIfIdle());
  clock_.now = 5.0;
  EXPECT_TRUE(store_->GroupIfIdle());
  EXPECT_EQ(stats().grouping_runs.load(), 1u);
  EXPECT_EQ(stats().segments_written.load(), 1u) << "four pieces of 1000 bytes in one segment";
  EXPECT_EQ(stats().bytes_grouped.load(), 4 * kPiece);
  clock_.now = 100;
  EXPECT_FALSE(store_->GroupIfIdle()) << "nothing read since the last run";
  EXPECT_EQ(stats().grouping_runs.load(), 1u);
}

TEST_F(SegmentStoreTest, LaterPassesReadFromTheSegmentWithTheSameBytes) {
  MakeStore();
  ReadPieces({9, 2, 14, 5, 11, 0});  // 6000 bytes: two segments
  ASSERT_TRUE(GroupAfterIdle());
  EXPECT_EQ(stats().segments_written.load(), 2u);
  const uint64_t misses = stats().read_misses.load();
  EXPECT_EQ(stats().reads_after_first_group.load(), 0u);
  ReadPieces({9, 2, 14, 5, 11, 0});
  EXPECT_EQ(stats().read_hits.load(), 6u);
  EXPECT_EQ(stats().reads_after_first_group.load(), 6u);
  EXPECT_EQ(stats().read_hits_after_first_group.load(), 6u);
  EXPECT_EQ(stats().read_misses.load(), misses);
  EXPECT_EQ(stats().bytes_from_segments.load(), 6 * kPiece);
  // A read overlapping a piece partly takes the overlap from the segment, the rest from storage.
  EXPECT_EQ(Read(9 * 4096 + 600, 1000), Expected(9 * 4096 + 600, 1000));
  EXPECT_EQ(Read(2 * 4096, 4096), Expected(2 * 4096, 4096));
  EXPECT_EQ(stats().read_partial_hits.load(), 2u);
  // Past the end of the file: short, as storage says.
  EXPECT_EQ(Read(kFileBytes - 10, 100), Expected(kFileBytes - 10, 100));
}

TEST_F(SegmentStoreTest, SegmentsComeFromDiskWhenNotInMemory) {
  options_.cache_size = 0;  // no segment stays in memory
  MakeStore();
  ReadPieces({3, 8, 1});
  ASSERT_TRUE(GroupAfterIdle());
  ReadPieces({3, 8, 1});
  EXPECT_EQ(stats().read_hits.load(), 3u);
  EXPECT_EQ(stats().segment_loads.load(), 3u);
  EXPECT_EQ(stats().segment_cache_hits.load(), 0u);
}

TEST_F(SegmentStoreTest, GroupingYieldsWhenARequestArrives) {
  MakeStore();
  ReadPieces({4, 12, 7});
  on_group_read_ = [this] { IdleTracker::Scope request(&store_->idle()); };
  EXPECT_FALSE(GroupAfterIdle());
  EXPECT_EQ(stats().grouping_yields.load(), 1u);
  EXPECT_EQ(stats().segments_written.load(), 0u);
  EXPECT_EQ(store_->segments_held(), 0u);
  // Idle again: the run is made again, in full.
  EXPECT_TRUE(GroupAfterIdle());
  EXPECT_EQ(stats().segments_written.load(), 1u);
  ReadPieces({4, 12, 7});
  EXPECT_EQ(stats().read_hits.load(), 3u);
}

TEST_F(SegmentStoreTest, AWriteDropsTheSegmentsItTouchesBeforeStorageChanges) {
  MakeStore();
  ReadPieces({6, 10});
  ReadPieces({15, 13});
  ASSERT_TRUE(GroupAfterIdle());
  ASSERT_EQ(store_->segments_held(), 1u);
  // The daemon's cache takes a write: the segment goes before the write is acknowledged.
  file_->WillChange(10 * 4096 + 150, 10);
  EXPECT_EQ(store_->segments_held(), 0u);
  EXPECT_EQ(stats().invalidated_segments.load(), 1u);
  // Its write-back, then reads.
  const std::string bytes(10, 'W');
  ASSERT_OK(file_->WriteAt(10 * 4096 + 150, bytes.data(), bytes.size()));
  content_.replace(10 * 4096 + 150, 10, bytes);
  ReadPieces({6, 10, 15, 13});
  EXPECT_EQ(stats().read_hits.load(), 0u);
  // The file is grouped again after its own write, which did not make it "changed behind".
  ASSERT_TRUE(GroupAfterIdle());
  ReadPieces({6, 10, 15, 13});
  EXPECT_EQ(stats().read_hits.load(), 4u);
}

TEST_F(SegmentStoreTest, AFileChangedBehindTheDaemonIsReadFromStorage) {
  MakeStore();
  ReadPieces({1, 3, 5});
  ASSERT_TRUE(GroupAfterIdle());
  WriteBehind(3 * 4096 + 200, "behind");
  // A client's sync (or the file's next open) finds the new version: every segment goes.
  ASSERT_OK(file_->Sync());
  EXPECT_EQ(store_->segments_held(), 0u);
  ReadPieces({1, 3, 5});
  EXPECT_EQ(stats().read_hits.load(), 0u);
  // A client that wrote storage itself says so.
  ASSERT_TRUE(GroupAfterIdle());
  ASSERT_EQ(store_->segments_held(), 1u);
  ASSERT_OK(file_->Invalidate());
  EXPECT_EQ(store_->segments_held(), 0u);
}

TEST_F(SegmentStoreTest, AGroupingRunDropsWhatChangedSinceItWasRead) {
  MakeStore();
  ReadPieces({2, 4});
  WriteBehind(4 * 4096 + 100, "xyz");  // nobody told the daemon
  EXPECT_FALSE(GroupAfterIdle()) << "the run ends early, to be made again";
  EXPECT_EQ(stats().segments_written.load(), 0u) << "the version the reads saw is gone";
  EXPECT_EQ(stats().grouping_retries.load(), 1u);
  EXPECT_EQ(stats().grouping_runs.load(), 0u);
  // The store knows the new version now: the next idle check groups what was read, from it,
  // with no read in between (the last run of a job, where no more reads come, still groups).
  EXPECT_TRUE(GroupAfterIdle());
  EXPECT_EQ(stats().segments_written.load(), 1u);
  ReadPieces({2, 4});
  EXPECT_EQ(stats().read_hits.load(), 2u);
  EXPECT_EQ(Read(4 * 4096 + 100, 3), "xyz");
}

TEST_F(SegmentStoreTest, ACorruptSegmentIsFoundAndBypassed) {
  options_.cache_size = 0;
  MakeStore();
  ReadPieces({7, 1, 12});
  ASSERT_TRUE(GroupAfterIdle());
  const std::string area = options_.location + "/" + SegmentArea::kFileName;
  const int fd = ::open(area.c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "garbage", 7, 1500), 7);  // inside the second piece
  ::close(fd);
  ReadPieces({7, 1, 12});
  EXPECT_EQ(stats().corrupt_segments.load(), 1u);
  EXPECT_EQ(stats().read_hits.load(), 0u);
  EXPECT_EQ(store_->segments_held(), 0u);
  ASSERT_FALSE(log_.empty());
  EXPECT_NE(log_.back().find("checksum"), std::string::npos) << log_.back();
}

TEST_F(SegmentStoreTest, AFullStoreEvictsTheLeastRecentlyUsedSegment) {
  options_.size = 2 * kSegment;
  MakeStore();
  ReadPieces({1, 2});
  ASSERT_TRUE(GroupAfterIdle());
  ReadPieces({3, 4});
  ASSERT_TRUE(GroupAfterIdle());
  ReadPieces({1, 2});  // the first group is used again
  ReadPieces({5, 6});
  ASSERT_TRUE(GroupAfterIdle());
  EXPECT_EQ(stats().evicted_segments.load(), 1u);
  EXPECT_EQ(store_->segments_held(), 2u);
  const uint64_t hits = stats().read_hits.load();
  ReadPieces({1, 2, 5, 6, 3, 4});
  EXPECT_EQ(stats().read_hits.load(), hits + 4) << "groups {1,2} and {5,6} stayed, {3,4} went";
}

TEST_F(SegmentStoreTest, ASegmentFileThatCannotBeWrittenStopsTheGroupingOnly) {
  MakeStore();
  ReadPieces({1, 2});
  ASSERT_TRUE(GroupAfterIdle());  // slot 0
  // Writes past the first segment of the segment file now fail (EFBIG), as a full disk would.
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const sighandler_t saved_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = saved;
  limited.rlim_cur = kSegment;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  ReadPieces({8, 9});
  const bool grouped = GroupAfterIdle();
  // The process's limits as they were, before anything can fail.
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ::signal(SIGXFSZ, saved_handler);
  EXPECT_FALSE(grouped);
  EXPECT_EQ(stats().write_errors.load(), 1u);
  ASSERT_FALSE(log_.empty());
  EXPECT_NE(log_.back().find("stops grouping"), std::string::npos) << log_.back();
  ReadPieces({10, 11});
  EXPECT_FALSE(GroupAfterIdle()) << "no more grouping";
  // What it holds is still served, and everything reads right.
  ReadPieces({1, 2, 8, 9});
  EXPECT_EQ(stats().read_hits.load(), 2u);
}

}  // namespace
}  // namespace segstore
}  // namespace stagio
