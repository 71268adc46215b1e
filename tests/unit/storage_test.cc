#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/driver.h"
#include "storage/fault_driver.h"
#include "storage/memory_driver.h"

namespace stagio {
namespace {

// ---- One behaviour suite, run against every driver that stores bytes.

// What the suite needs from a driver besides the Driver interface: making a file the way MPI
// would before stagio opens it, and a path that does not exist.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Driver* driver() = 0;
  virtual std::string CreateFile(const std::string& name) = 0;  // returns its path
  virtual std::string MissingPath() = 0;
};

class PosixBackend : public Backend {
 public:
  PosixBackend() {
    char pattern[] = "/tmp/stagio_storage_test.XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  ~PosixBackend() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  Driver* driver() override { return PosixDriver(); }
  std::string CreateFile(const std::string& name) override {
    const std::string path = dir_ + "/" + name;
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    EXPECT_GE(fd, 0) << path;
    ::close(fd);
    return path;
  }
  std::string MissingPath() override { return dir_ + "/missing"; }

 private:
  std::string dir_;
};

class MemoryBackend : public Backend {
 public:
  Driver* driver() override { return &driver_; }
  std::string CreateFile(const std::string& name) override {
    driver_.CreateFile("/mem/" + name);
    return "/mem/" + name;
  }
  std::string MissingPath() override { return "/mem/missing"; }

 private:
  MemoryDriver driver_;
};

struct BackendFactory {
  const char* name;
  std::function<std::unique_ptr<Backend>()> make;
};

class DriverSuite : public testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override { backend_ = GetParam().make(); }

  std::unique_ptr<DriverFile> OpenNew(const std::string& name,
                                      OpenAccess access = OpenAccess::kReadWrite) {
    std::unique_ptr<DriverFile> file;
    Status status = backend_->driver()->Open(backend_->CreateFile(name), access, &file);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return file;
  }

  static std::string ReadAll(DriverFile* file, uint64_t offset, size_t length) {
    std::string buffer(length, '?');
    size_t got = 0;
    Status status = file->ReadAt(offset, buffer.data(), length, &got);
    EXPECT_TRUE(status.ok()) << status.ToString();
    buffer.resize(got);
    return buffer;
  }

  static uint64_t SizeOf(DriverFile* file) {
    uint64_t size = 0;
    Status status = file->GetSize(&size);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return size;
  }

  std::unique_ptr<Backend> backend_;
};

TEST_P(DriverSuite, WriteThenReadRoundTrip) {
  auto file = OpenNew("round_trip");
  ASSERT_TRUE(file->WriteAt(0, "hello, world", 12).ok());
  ASSERT_TRUE(file->WriteAt(7, "stagio", 6).ok());
  EXPECT_EQ(ReadAll(file.get(), 0, 13), "hello, stagio");
  EXPECT_EQ(ReadAll(file.get(), 7, 3), "sta");
}

TEST_P(DriverSuite, LargeTransferRoundTrip) {
  auto file = OpenNew("large");
  std::string data(8 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + 7);
  ASSERT_TRUE(file->WriteAt(4096, data.data(), data.size()).ok());
  EXPECT_EQ(ReadAll(file.get(), 4096, data.size()), data);
  EXPECT_EQ(SizeOf(file.get()), 4096 + data.size());
}

TEST_P(DriverSuite, ReadPastEndOfFileIsShortNotAnError) {
  auto file = OpenNew("short");
  ASSERT_TRUE(file->WriteAt(0, "0123456789", 10).ok());
  EXPECT_EQ(ReadAll(file.get(), 5, 20), "56789");
  EXPECT_EQ(ReadAll(file.get(), 10, 4), "");
  EXPECT_EQ(ReadAll(file.get(), 1000, 4), "");
  EXPECT_EQ(ReadAll(file.get(), 0, 0), "");
}

TEST_P(DriverSuite, WriteBeyondEndZeroFills) {
  auto file = OpenNew("gap");
  ASSERT_TRUE(file->WriteAt(0, "ab", 2).ok());
  ASSERT_TRUE(file->WriteAt(10, "xy", 2).ok());
  EXPECT_EQ(SizeOf(file.get()), 12u);
  EXPECT_EQ(ReadAll(file.get(), 0, 12), std::string("ab\0\0\0\0\0\0\0\0xy", 12));
}

TEST_P(DriverSuite, TruncateShrinksAndGrows) {
  auto file = OpenNew("truncate");
  ASSERT_TRUE(file->WriteAt(0, "abcdefgh", 8).ok());
  ASSERT_TRUE(file->Truncate(3).ok());
  EXPECT_EQ(SizeOf(file.get()), 3u);
  EXPECT_EQ(ReadAll(file.get(), 0, 8), "abc");
  ASSERT_TRUE(file->Truncate(6).ok());
  EXPECT_EQ(SizeOf(file.get()), 6u);
  EXPECT_EQ(ReadAll(file.get(), 0, 8), std::string("abc\0\0\0", 6));
  ASSERT_TRUE(file->Truncate(0).ok());
  EXPECT_EQ(SizeOf(file.get()), 0u);
}

TEST_P(DriverSuite, SizeFollowsWrites) {
  auto file = OpenNew("size");
  EXPECT_EQ(SizeOf(file.get()), 0u);
  ASSERT_TRUE(file->WriteAt(0, "abc", 3).ok());
  EXPECT_EQ(SizeOf(file.get()), 3u);
  ASSERT_TRUE(file->WriteAt(1, "z", 1).ok());  // inside: no growth
  EXPECT_EQ(SizeOf(file.get()), 3u);
  ASSERT_TRUE(file->WriteAt(100, "", 0).ok());  // empty write: no growth
  EXPECT_EQ(SizeOf(file.get()), 3u);
  ASSERT_TRUE(file->Sync().ok());
}

TEST_P(DriverSuite, MissingFileIsAnErrorAndIsNotCreated) {
  std::unique_ptr<DriverFile> file;
  const std::string missing = backend_->MissingPath();
  Status status = backend_->driver()->Open(missing, OpenAccess::kReadWrite, &file);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(missing), std::string::npos) << status.ToString();
  EXPECT_EQ(file, nullptr);
  EXPECT_FALSE(backend_->driver()->Open(missing, OpenAccess::kReadOnly, &file).ok());
}

TEST_P(DriverSuite, AccessModeIsEnforced) {
  const std::string path = backend_->CreateFile("modes");
  std::unique_ptr<DriverFile> writer;
  ASSERT_TRUE(backend_->driver()->Open(path, OpenAccess::kWriteOnly, &writer).ok());
  ASSERT_TRUE(writer->WriteAt(0, "data", 4).ok());
  char buffer[4];
  size_t got = 99;
  EXPECT_FALSE(writer->ReadAt(0, buffer, 4, &got).ok());

  std::unique_ptr<DriverFile> reader;
  ASSERT_TRUE(backend_->driver()->Open(path, OpenAccess::kReadOnly, &reader).ok());
  EXPECT_EQ(ReadAll(reader.get(), 0, 4), "data");
  Status status = reader->WriteAt(0, "nope", 4);
  EXPECT_EQ(status.code(), Status::Code::kIOError);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.ToString();
  EXPECT_EQ(ReadAll(reader.get(), 0, 4), "data");
}

TEST_P(DriverSuite, HandlesOnOneFileShareBytesAndKeepTheirPath) {
  const std::string path = backend_->CreateFile("shared");
  std::unique_ptr<DriverFile> first;
  std::unique_ptr<DriverFile> second;
  ASSERT_TRUE(backend_->driver()->Open(path, OpenAccess::kReadWrite, &first).ok());
  ASSERT_TRUE(backend_->driver()->Open(path, OpenAccess::kReadOnly, &second).ok());
  EXPECT_EQ(first->path(), path);
  ASSERT_TRUE(first->WriteAt(0, "seen", 4).ok());
  EXPECT_EQ(ReadAll(second.get(), 0, 4), "seen");
}

TEST_P(DriverSuite, ConcurrentWritesToDisjointRanges) {
  auto file = OpenNew("concurrent");
  constexpr int kThreads = 8;
  constexpr size_t kChunk = 64 << 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&file, t] {
      const std::string data(kChunk, static_cast<char>('a' + t));
      // Write back to front so every thread may extend the file while others write.
      for (int i = 3; i >= 0; --i) {
        const uint64_t offset = (static_cast<uint64_t>(i) * kThreads + t) * kChunk;
        EXPECT_TRUE(file->WriteAt(offset, data.data(), kChunk).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(SizeOf(file.get()), 4 * kThreads * kChunk);
  for (int i = 0; i < 4 * kThreads; ++i) {
    EXPECT_EQ(ReadAll(file.get(), i * kChunk, kChunk),
              std::string(kChunk, static_cast<char>('a' + i % kThreads)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Drivers, DriverSuite,
    testing::Values(
        BackendFactory{"posix", [] { return std::unique_ptr<Backend>(new PosixBackend); }},
        BackendFactory{"memory", [] { return std::unique_ptr<Backend>(new MemoryBackend); }}),
    [](const testing::TestParamInfo<BackendFactory>& info) { return std::string(info.param.name); });

// ---- Driver-specific details.

TEST(PosixDriverTest, IsOneProcessWideInstance) {
  EXPECT_EQ(PosixDriver(), PosixDriver());
  EXPECT_STREQ(PosixDriver()->name(), "posix");
}

TEST(PosixDriverTest, OpenErrorSaysWhy) {
  std::unique_ptr<DriverFile> file;
  Status status = PosixDriver()->Open("/nonexistent-dir/f", OpenAccess::kReadOnly, &file);
  EXPECT_EQ(status.code(), Status::Code::kIOError);
  EXPECT_EQ(status.message(), "open /nonexistent-dir/f: No such file or directory");
}

// The largest size it reports is the file system's: a write may end there, and not one byte
// further (where the file system has a limit below the largest offset at all).
TEST(PosixDriverTest, LargestSizeIsWhereTheFileSystemStopsWrites) {
  PosixBackend backend;
  const std::string path = backend.CreateFile("largest");
  std::unique_ptr<DriverFile> file;
  ASSERT_TRUE(PosixDriver()->Open(path, OpenAccess::kReadWrite, &file).ok());
  const std::optional<uint64_t> largest = file->LargestSize();
  ASSERT_TRUE(largest.has_value()) << "Linux file systems answer lseek";
  EXPECT_EQ(file->LargestSize(), largest) << "asked once, the same answer";
  const uint64_t kLargestOffset = static_cast<uint64_t>(std::numeric_limits<off_t>::max());
  if (*largest >= kLargestOffset) GTEST_SKIP() << "no limit below the largest offset here";
  EXPECT_TRUE(file->WriteAt(*largest - 1, "x", 1).ok());  // sparse: no space is used
  const Status past = file->WriteAt(*largest, "x", 1);
  EXPECT_FALSE(past.ok());
  EXPECT_NE(past.message().find("File too large"), std::string::npos) << past.message();
  EXPECT_TRUE(file->Truncate(0).ok());
}

TEST(MemoryDriverTest, ContentsAndCreate) {
  MemoryDriver driver;
  EXPECT_STREQ(driver.name(), "memory");
  EXPECT_EQ(driver.Contents("/none"), "");
  std::unique_ptr<DriverFile> file;
  EXPECT_EQ(driver.Open("/none", OpenAccess::kReadOnly, &file).code(), Status::Code::kNotFound);
  driver.CreateFile("/f");
  ASSERT_TRUE(driver.Open("/f", OpenAccess::kReadWrite, &file).ok());
  ASSERT_TRUE(file->WriteAt(2, "hi", 2).ok());
  EXPECT_EQ(driver.Contents("/f"), std::string("\0\0hi", 4));
  driver.CreateFile("/f");  // existing contents stay
  EXPECT_EQ(driver.Contents("/f"), std::string("\0\0hi", 4));
}

// ---- Fault injection, over a memory driver so tests can see what reached the target.

class FaultDriverTest : public testing::Test {
 protected:
  FaultDriverTest() : faults_(&memory_) {}

  std::unique_ptr<DriverFile> Open(const std::string& path) {
    memory_.CreateFile(path);
    std::unique_ptr<DriverFile> file;
    Status status = faults_.Open(path, OpenAccess::kReadWrite, &file);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return file;
  }

  static bool ReadOk(DriverFile* file) {
    char buffer[4];
    size_t got = 0;
    return file->ReadAt(0, buffer, sizeof(buffer), &got).ok();
  }

  static bool WriteOk(DriverFile* file) { return file->WriteAt(0, "w", 1).ok(); }

  MemoryDriver memory_;
  FaultInjectingDriver faults_;
};

TEST_F(FaultDriverTest, NoRulesPassesEverythingThrough) {
  EXPECT_STREQ(faults_.name(), "fault");
  EXPECT_EQ(faults_.target(), &memory_);
  auto file = Open("/f");
  ASSERT_TRUE(file->WriteAt(0, "abc", 3).ok());
  EXPECT_EQ(memory_.Contents("/f"), "abc");
  EXPECT_TRUE(ReadOk(file.get()));
  EXPECT_TRUE(file->Sync().ok());
  EXPECT_EQ(file->path(), "/f");
  std::unique_ptr<DriverFile> missing;
  EXPECT_EQ(faults_.Open("/missing", OpenAccess::kReadOnly, &missing).code(),
            Status::Code::kNotFound);
}

TEST_F(FaultDriverTest, OpenCanFail) {
  Open("/f").reset();  // creates it
  ASSERT_TRUE(faults_.SetFaults("open=fail").ok());
  std::unique_ptr<DriverFile> file;
  const Status status = faults_.Open("/f", OpenAccess::kReadWrite, &file);
  EXPECT_EQ(status.code(), Status::Code::kIOError);
  EXPECT_EQ(file, nullptr);
  EXPECT_EQ(faults_.injected("open"), 1u);
  ASSERT_TRUE(faults_.SetFaults("open=ok").ok());
  EXPECT_TRUE(faults_.Open("/f", OpenAccess::kReadWrite, &file).ok());
}

TEST_F(FaultDriverTest, FailLeavesTheTargetUntouched) {
  auto file = Open("/f");
  ASSERT_TRUE(file->WriteAt(0, "keep", 4).ok());
  ASSERT_TRUE(faults_.SetFaults("write=fail").ok());
  Status status = file->WriteAt(8, "lost", 4);
  EXPECT_EQ(status.code(), Status::Code::kIOError);
  EXPECT_EQ(status.message(), "injected fault: write /f offset 8");
  EXPECT_EQ(memory_.Contents("/f"), "keep");
  EXPECT_TRUE(ReadOk(file.get()));  // other ops unaffected
  EXPECT_TRUE(file->Sync().ok());
  EXPECT_FALSE(WriteOk(file.get()));
  EXPECT_EQ(faults_.injected("write"), 2u);
  EXPECT_EQ(faults_.injected("read"), 0u);
}

TEST_F(FaultDriverTest, FailedReadReportsNothingRead) {
  auto file = Open("/f");
  ASSERT_TRUE(file->WriteAt(0, "data", 4).ok());
  ASSERT_TRUE(faults_.SetFaults("read=fail").ok());
  char buffer[4] = {'?', '?', '?', '?'};
  size_t got = 99;
  Status status = file->ReadAt(2, buffer, 4, &got);
  EXPECT_EQ(status.message(), "injected fault: read /f offset 2");
  EXPECT_EQ(got, 0u);
  EXPECT_EQ(buffer[0], '?');
  EXPECT_EQ(faults_.injected("read"), 1u);
}

TEST_F(FaultDriverTest, SyncCanFail) {
  auto file = Open("/f");
  ASSERT_TRUE(faults_.SetFaults("sync=fail").ok());
  EXPECT_EQ(file->Sync().message(), "injected fault: sync /f offset 0");
  EXPECT_EQ(faults_.injected("sync"), 1u);
}

TEST_F(FaultDriverTest, FailAfterCountsCallsOverAllFiles) {
  auto first = Open("/a");
  auto second = Open("/b");
  ASSERT_TRUE(faults_.SetFaults("write=fail_after:3").ok());
  EXPECT_TRUE(WriteOk(first.get()));
  EXPECT_TRUE(WriteOk(second.get()));
  EXPECT_TRUE(ReadOk(first.get()));  // reads do not count against the write rule
  EXPECT_TRUE(WriteOk(first.get()));
  EXPECT_FALSE(WriteOk(second.get()));
  EXPECT_FALSE(WriteOk(first.get()));
  EXPECT_EQ(faults_.injected("write"), 2u);

  ASSERT_TRUE(faults_.SetFaults("write=fail_after:0").ok());
  EXPECT_FALSE(WriteOk(first.get()));
}

TEST_F(FaultDriverTest, OkRemovesOneRule) {
  auto file = Open("/f");
  ASSERT_TRUE(faults_.SetFaults("read=fail,write=fail").ok());
  EXPECT_FALSE(ReadOk(file.get()));
  ASSERT_TRUE(faults_.SetFaults("read=ok").ok());
  EXPECT_TRUE(ReadOk(file.get()));
  EXPECT_FALSE(WriteOk(file.get()));  // rules not named stay
}

TEST_F(FaultDriverTest, EmptySpecClearsAllRules) {
  auto file = Open("/f");
  ASSERT_TRUE(faults_.SetFaults("read=fail, write=fail , sync=fail_after:1").ok());
  EXPECT_FALSE(ReadOk(file.get()));
  EXPECT_FALSE(WriteOk(file.get()));
  ASSERT_TRUE(faults_.SetFaults("").ok());
  EXPECT_TRUE(ReadOk(file.get()));
  EXPECT_TRUE(WriteOk(file.get()));
  EXPECT_TRUE(file->Sync().ok());
  EXPECT_TRUE(file->Sync().ok());
  // Counters are history: clearing rules does not reset them.
  EXPECT_EQ(faults_.injected("read"), 1u);
}

TEST_F(FaultDriverTest, MalformedSpecIsRejectedAndChangesNothing) {
  auto file = Open("/f");
  ASSERT_TRUE(faults_.SetFaults("write=fail").ok());
  const char* const kMalformed[] = {
      "read",       "read=",          "=fail",         "close=fail",    "read=explode",
      "read=fail_after:", "read=fail_after:x", "read=fail_after:-1", "read=fail_after:1x",
      "read=fail,,", "read=ok,bogus", "read=fail_after:99999999999999999999", "READ=fail",
  };
  for (const char* spec : kMalformed) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(faults_.SetFaults(spec).code(), Status::Code::kInvalidArgument);
  }
  EXPECT_TRUE(ReadOk(file.get()));    // "read=..." from a rejected spec was not applied
  EXPECT_FALSE(WriteOk(file.get()));  // the earlier rule is still in force
}

TEST_F(FaultDriverTest, CountersByOp) {
  auto file = Open("/f");
  ASSERT_TRUE(faults_.SetFaults("read=fail,write=fail,sync=fail").ok());
  ReadOk(file.get());
  ReadOk(file.get());
  WriteOk(file.get());
  file->Sync();
  file->Sync();
  file->Sync();
  EXPECT_EQ(faults_.injected("read"), 2u);
  EXPECT_EQ(faults_.injected("write"), 1u);
  EXPECT_EQ(faults_.injected("sync"), 3u);
  EXPECT_EQ(faults_.injected("open"), 0u);
}

TEST_F(FaultDriverTest, RulesChangeWhileOtherThreadsDoIo) {
  auto file = Open("/f");
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&file] {
      for (int i = 0; i < 2000; ++i) {
        ReadOk(file.get());
        WriteOk(file.get());
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    EXPECT_TRUE(faults_.SetFaults(i % 2 ? "read=fail,write=fail_after:3" : "").ok());
  }
  for (std::thread& worker : workers) worker.join();
  ASSERT_TRUE(faults_.SetFaults("").ok());
  EXPECT_TRUE(WriteOk(file.get()));
}

TEST(FaultOverPosixTest, InjectedWriteNeverReachesTheFile) {
  char pattern[] = "/tmp/stagio_fault_test.XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string path = dir + "/f";
  ::close(::open(path.c_str(), O_CREAT | O_WRONLY, 0644));
  FaultInjectingDriver faults(PosixDriver());
  std::unique_ptr<DriverFile> file;
  ASSERT_TRUE(faults.Open(path, OpenAccess::kReadWrite, &file).ok());
  ASSERT_TRUE(faults.SetFaults("write=fail").ok());
  EXPECT_FALSE(file->WriteAt(0, "x", 1).ok());
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_size, 0);
  file.reset();
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace stagio
