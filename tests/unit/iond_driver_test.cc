// The client side of the I/O-node tier (IondDriver, IondFile) against real daemons run
// in-process: pieces reach their home daemons and come back whole, the daemons' cache is what
// other clients read before any flush, and every way of losing a daemon falls back to direct
// storage without losing a byte the client still held.
#include "storage/iond_driver.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "iond/server.h"
#include "storage/iond_file.h"

namespace stagio {
namespace {

// Long enough for any request here on a loaded machine; a hung daemon still fails the test.
constexpr net::Timeout kClientTimeout{60000};

std::string MakeTempDir() {
  char pattern[] = "/tmp/stagio-iond-driver-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  EXPECT_NE(made, nullptr);
  char resolved[PATH_MAX];
  EXPECT_NE(::realpath(made, resolved), nullptr);
  return resolved;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void CreateFile(const std::string& path, const std::string& contents = "") {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random());
  return bytes;
}

class IondDriverTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  void TearDown() override {
    servers_.clear();
    ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0);
  }

  // Starts a daemon on a UNIX socket in the test directory, rooted there.
  // `hold_dirty`: write back only at flush, sync, close or shutdown (water marks at 100%), so
  // that a test knows what a daemon still holds.
  net::Address StartDaemon(const std::string& token = "", bool hold_dirty = false) {
    iond::IondConfig config;
    net::Address address;
    EXPECT_TRUE(net::Address::Parse("unix:" + dir_ + "/d" + std::to_string(servers_.size()) +
                                        ".sock", &address).ok());
    config.listen = {address};
    config.root = dir_;
    config.cache_size = 1 << 20;
    config.block_size = 4096;
    config.token = token;
    if (hold_dirty) config.write_back_high = config.write_back_low = 100;
    servers_.push_back(std::make_unique<iond::IondServer>(
        config, [this](const std::string& line) {
          std::lock_guard<std::mutex> lock(log_mutex_);
          daemon_log_ += line + "\n";
        }));
    EXPECT_TRUE(servers_.back()->Start().ok());
    return address;
  }

  std::unique_ptr<DriverFile> Open(IondDriver& driver, const std::string& name) {
    std::unique_ptr<DriverFile> file;
    EXPECT_TRUE(driver.Open(name, OpenAccess::kReadWrite, &file).ok());
    return file;
  }

  static bool ThroughDaemons(const std::unique_ptr<DriverFile>& file) {
    return dynamic_cast<IondFile*>(file.get()) != nullptr;
  }

  std::string dir_;
  std::mutex log_mutex_;  // the daemons log from their own threads
  std::string daemon_log_;
  std::vector<std::unique_ptr<iond::IondServer>> servers_;
};

TEST_F(IondDriverTest, PiecesOnTwoDaemonsComeBackWholeAndOtherClientsSeeThemBeforeAFlush) {
  const std::vector<net::Address> daemons = {StartDaemon(), StartDaemon()};
  const std::string path = dir_ + "/data";
  CreateFile(path);
  IondDriver writer_driver(PosixDriver(), daemons, "", kClientTimeout, false);
  IondDriver reader_driver(PosixDriver(), daemons, "", kClientTimeout, false);
  auto writer = Open(writer_driver, path);
  auto reader = Open(reader_driver, path);
  ASSERT_TRUE(ThroughDaemons(writer));
  writer->SetBlockLayout(4096, 4);
  reader->SetBlockLayout(4096, 4);

  const std::string bytes = RandomBytes(100000, 1);
  ASSERT_TRUE(writer->WriteAt(123, bytes.data(), bytes.size()).ok());
  // Nothing forced the daemons to storage yet, but every block has one home: the other
  // client reads the new bytes from there.
  std::string back(bytes.size() + 500, '\0');
  size_t got = 0;
  ASSERT_TRUE(reader->ReadAt(123, back.data(), back.size(), &got).ok());
  EXPECT_EQ(got, bytes.size());  // short: the file ends there
  EXPECT_EQ(back.substr(0, got), bytes);
  uint64_t size = 0;
  ASSERT_TRUE(reader->GetSize(&size).ok());
  EXPECT_EQ(size, 123 + bytes.size());

  ASSERT_TRUE(writer->Flush().ok());
  const std::string on_disk = ReadWhole(path);
  ASSERT_EQ(on_disk.size(), 123 + bytes.size());
  EXPECT_EQ(on_disk.substr(123), bytes);
}

TEST_F(IondDriverTest, AnUnreachableDaemonMeansDirectStorage) {
  net::Address nowhere;
  ASSERT_TRUE(net::Address::Parse("unix:" + dir_ + "/nobody.sock", &nowhere).ok());
  const std::string path = dir_ + "/data";
  CreateFile(path, "abc");
  IondDriver driver(PosixDriver(), {nowhere}, "", kClientTimeout, false);
  auto file = Open(driver, path);
  EXPECT_FALSE(ThroughDaemons(file));
  ASSERT_TRUE(file->WriteAt(3, "def", 3).ok());
  EXPECT_EQ(ReadWhole(path), "abcdef");
}

TEST_F(IondDriverTest, AWrongTokenIsRefusedAndTheFileGoesDirect) {
  const net::Address daemon = StartDaemon("right token");
  const std::string path = dir_ + "/data";
  CreateFile(path);
  IondDriver wrong(PosixDriver(), {daemon}, "wrong token", kClientTimeout, false);
  EXPECT_FALSE(ThroughDaemons(Open(wrong, path)));
  IondDriver right(PosixDriver(), {daemon}, "right token", kClientTimeout, false);
  EXPECT_TRUE(ThroughDaemons(Open(right, path)));
}

TEST_F(IondDriverTest, AFileOutsideTheRootGoesDirect) {
  const net::Address daemon = StartDaemon();
  const std::string outside = MakeTempDir();
  CreateFile(outside + "/data", "x");
  IondDriver driver(PosixDriver(), {daemon}, "", kClientTimeout, false);
  auto file = Open(driver, outside + "/data");
  EXPECT_FALSE(ThroughDaemons(file));
  ASSERT_TRUE(file->WriteAt(1, "y", 1).ok());
  EXPECT_EQ(ReadWhole(outside + "/data"), "xy");
  ASSERT_EQ(std::system(("rm -rf " + outside).c_str()), 0);
  std::lock_guard<std::mutex> lock(log_mutex_);
  EXPECT_NE(daemon_log_.find("outside"), std::string::npos) << daemon_log_;
}

TEST_F(IondDriverTest, ALostDaemonFailsTheNextFlushOnceAndLaterWritesGoDirect) {
  const net::Address daemon = StartDaemon();
  const std::string path = dir_ + "/data";
  CreateFile(path);
  IondDriver driver(PosixDriver(), {daemon}, "", kClientTimeout, false);
  auto file = Open(driver, path);
  ASSERT_TRUE(ThroughDaemons(file));
  ASSERT_TRUE(file->WriteAt(0, "flushed.", 8).ok());
  ASSERT_TRUE(file->Flush().ok());
  ASSERT_TRUE(file->WriteAt(8, "accepted", 8).ok());
  ASSERT_TRUE(servers_[0]->Stop().ok());

  // The daemon is gone: the write goes direct, and the flush cannot vouch for "accepted".
  ASSERT_TRUE(file->WriteAt(16, "direct..", 8).ok());
  EXPECT_FALSE(file->Flush().ok());
  EXPECT_TRUE(file->Flush().ok());  // reported once
  EXPECT_TRUE(file->Sync().ok());
  // This daemon stopped gracefully, so it wrote back what it had accepted.
  EXPECT_EQ(ReadWhole(path), "flushed.accepteddirect..");
  std::string back(24, '\0');
  size_t got = 0;
  ASSERT_TRUE(file->ReadAt(0, back.data(), back.size(), &got).ok());
  EXPECT_EQ(back, "flushed.accepteddirect..");
}

TEST_F(IondDriverTest, ALostDaemonWithNothingUnflushedFailsNothing) {
  const net::Address daemon = StartDaemon();
  const std::string path = dir_ + "/data";
  CreateFile(path);
  IondDriver driver(PosixDriver(), {daemon}, "", kClientTimeout, false);
  auto file = Open(driver, path);
  ASSERT_TRUE(file->WriteAt(0, "synced", 6).ok());
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(servers_[0]->Stop().ok());
  EXPECT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->WriteAt(6, "!", 1).ok());
  EXPECT_TRUE(file->Flush().ok());
  EXPECT_EQ(ReadWhole(path), "synced!");
}

TEST_F(IondDriverTest, InvalidateShowsWhatWasWrittenBehindTheDaemon) {
  const net::Address daemon = StartDaemon();
  const std::string path = dir_ + "/data";
  CreateFile(path, std::string(8192, 'a'));
  IondDriver driver(PosixDriver(), {daemon}, "", kClientTimeout, false);
  auto file = Open(driver, path);
  std::string back(8192, '\0');
  size_t got = 0;
  ASSERT_TRUE(file->ReadAt(0, back.data(), back.size(), &got).ok());
  CreateFile(path, std::string(100, 'b'));  // truncates and rewrites, behind the daemon
  ASSERT_TRUE(file->Invalidate().ok());
  uint64_t size = 0;
  ASSERT_TRUE(file->GetSize(&size).ok());
  EXPECT_EQ(size, 100u);
  ASSERT_TRUE(file->ReadAt(0, back.data(), back.size(), &got).ok());
  EXPECT_EQ(back.substr(0, got), std::string(100, 'b'));
}

TEST_F(IondDriverTest, AHoleAtOneDaemonDoesNotEndAReadThatAnotherDaemonHasBytesFor) {
  // Block 0 lives on daemon 0, block 1 on daemon 1; only block 1 is written, and daemon 1
  // keeps it: daemon 0 believes the file is empty.
  const std::vector<net::Address> daemons = {StartDaemon("", true), StartDaemon("", true)};
  const std::string path = dir_ + "/data";
  CreateFile(path);
  IondDriver driver(PosixDriver(), daemons, "", kClientTimeout, false);
  auto writer = Open(driver, path);
  auto reader = Open(driver, path);
  writer->SetBlockLayout(4096, 2);
  reader->SetBlockLayout(4096, 2);
  const std::string bytes = RandomBytes(4096, 7);
  ASSERT_TRUE(writer->WriteAt(4096, bytes.data(), bytes.size()).ok());
  std::string back(8192, 'x');
  size_t got = 0;
  ASSERT_TRUE(reader->ReadAt(0, back.data(), back.size(), &got).ok());
  ASSERT_EQ(got, 8192u);
  EXPECT_EQ(back.substr(0, 4096), std::string(4096, '\0'));
  EXPECT_EQ(back.substr(4096), bytes);
}

TEST_F(IondDriverTest, WhenOneDaemonIsLostTheSurvivorsWriteBackBeforeTheFileGoesDirect) {
  const std::vector<net::Address> daemons = {StartDaemon("", true), StartDaemon("", true)};
  const std::string path = dir_ + "/data";
  CreateFile(path);
  IondDriver driver(PosixDriver(), daemons, "", kClientTimeout, false);
  auto file = Open(driver, path);
  file->SetBlockLayout(4096, 2);
  const std::string old_bytes = RandomBytes(8192, 8);
  ASSERT_TRUE(file->WriteAt(0, old_bytes.data(), old_bytes.size()).ok());
  ASSERT_TRUE(servers_[0]->Stop().ok());  // daemon 0 is gone; daemon 1 holds block 1 dirty

  const std::string new_block = RandomBytes(4096, 9);
  ASSERT_TRUE(file->WriteAt(4096, new_block.data(), new_block.size()).ok());  // falls back
  EXPECT_FALSE(file->Sync().ok());  // block 0's daemon is lost: reported once
  EXPECT_TRUE(file->Sync().ok());
  // Daemon 1 wrote its old block 1 back when the file fell back, not later over the new one.
  ASSERT_TRUE(servers_[1]->Stop().ok());
  EXPECT_EQ(ReadWhole(path), old_bytes.substr(0, 4096) + new_block);
}

}  // namespace
}  // namespace stagio
