// The segments on disk: what is written reads back, and bytes changed or cut behind the
// daemon's back are found by their checksum and length; a location that cannot hold a
// segment is refused with a message.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "segstore/segment_area.h"
#include "support/test_helpers.h"

namespace stagio {
namespace segstore {
namespace {

constexpr uint64_t kSegment = 4096;

class SegmentAreaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/stagio-segarea-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    ::unlink((dir_ + "/" + SegmentArea::kFileName).c_str());
    ::chmod(dir_.c_str(), 0700);
    ::rmdir(dir_.c_str());
  }
  std::string file() const { return dir_ + "/" + SegmentArea::kFileName; }
  std::string dir_;
};

TEST_F(SegmentAreaTest, SegmentsReadBackAsWritten) {
  std::unique_ptr<SegmentArea> area;
  ASSERT_OK(SegmentArea::Open(dir_, 4 * kSegment + 100, kSegment, &area));
  EXPECT_EQ(area->slot_count(), 4u) << "whole segments only";
  struct stat info {};
  ASSERT_EQ(::stat(file().c_str(), &info), 0);
  EXPECT_GE(static_cast<uint64_t>(info.st_blocks) * 512, 4 * kSegment) << "space reserved";
  ASSERT_OK(area->Write(2, std::string(1000, 'b')));
  ASSERT_OK(area->Write(0, std::string(kSegment, 'a')));
  std::string data;
  ASSERT_OK(area->Read(2, &data));
  EXPECT_EQ(data, std::string(1000, 'b'));
  ASSERT_OK(area->Read(0, &data));
  EXPECT_EQ(data, std::string(kSegment, 'a'));
  EXPECT_FALSE(area->Read(1, &data).ok()) << "never written";
  area->Forget(2);
  EXPECT_FALSE(area->Read(2, &data).ok()) << "forgotten";
  EXPECT_FALSE(area->Write(3, std::string(kSegment + 1, 'x')).ok()) << "larger than a segment";
}

TEST_F(SegmentAreaTest, BytesChangedBehindTheDaemonFailTheChecksum) {
  std::unique_ptr<SegmentArea> area;
  ASSERT_OK(SegmentArea::Open(dir_, 2 * kSegment, kSegment, &area));
  ASSERT_OK(area->Write(1, std::string(kSegment, 'z')));
  const int fd = ::open(file().c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "Y", 1, kSegment + 77), 1);
  std::string data;
  Status status = area->Read(1, &data);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("checksum"), std::string::npos) << status.message();
  // Cut short behind the daemon.
  ASSERT_OK(area->Write(1, std::string(kSegment, 'z')));
  ASSERT_EQ(::ftruncate(fd, kSegment + 10), 0);
  ::close(fd);
  status = area->Read(1, &data);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("truncated"), std::string::npos) << status.message();
}

TEST_F(SegmentAreaTest, ADaemonStartingAgainStartsEmpty) {
  std::unique_ptr<SegmentArea> area;
  ASSERT_OK(SegmentArea::Open(dir_, 2 * kSegment, kSegment, &area));
  ASSERT_OK(area->Write(0, std::string(100, 'q')));
  area.reset();  // the daemon stops (or is killed)
  ASSERT_OK(SegmentArea::Open(dir_, 2 * kSegment, kSegment, &area));
  std::string data;
  EXPECT_FALSE(area->Read(0, &data).ok()) << "nothing from before is served";
  struct stat info {};
  ASSERT_EQ(::stat(file().c_str(), &info), 0);
  char byte = 'x';
  const int fd = ::open(file().c_str(), O_RDONLY);
  ASSERT_EQ(::pread(fd, &byte, 1, 0), 1);
  ::close(fd);
  EXPECT_EQ(byte, '\0') << "the old file was replaced";
}

TEST_F(SegmentAreaTest, ASecondDaemonOnTheSameDirectoryIsRefused) {
  std::unique_ptr<SegmentArea> first, second;
  ASSERT_OK(SegmentArea::Open(dir_, 2 * kSegment, kSegment, &first));
  ASSERT_OK(first->Write(0, std::string(100, 'f')));
  Status status = SegmentArea::Open(dir_, 2 * kSegment, kSegment, &second);
  EXPECT_NE(status.message().find("in use by another daemon"), std::string::npos)
      << status.message();
  std::string data;
  ASSERT_OK(first->Read(0, &data));  // the first one's segments are untouched
  first.reset();
  EXPECT_OK(SegmentArea::Open(dir_, 2 * kSegment, kSegment, &second));
}

TEST_F(SegmentAreaTest, LocationsThatCannotHoldSegmentsAreRefused) {
  std::unique_ptr<SegmentArea> area;
  Status status = SegmentArea::Open(dir_, kSegment - 1, kSegment, &area);
  EXPECT_NE(status.message().find("holds no segment"), std::string::npos) << status.message();
  status = SegmentArea::Open(dir_ + "/missing", 4 * kSegment, kSegment, &area);
  EXPECT_NE(status.message().find(dir_ + "/missing"), std::string::npos) << status.message();
  // More than the disk has: refused at once, and nothing left behind.
  status = SegmentArea::Open(dir_, uint64_t{1} << 60, kSegment, &area);
  EXPECT_NE(status.message().find("cannot reserve"), std::string::npos) << status.message();
  EXPECT_NE(::access(file().c_str(), F_OK), 0);
  if (::geteuid() != 0) {  // root writes anywhere
    ASSERT_EQ(::chmod(dir_.c_str(), 0500), 0);
    status = SegmentArea::Open(dir_, 4 * kSegment, kSegment, &area);
    EXPECT_NE(status.message().find("cannot create"), std::string::npos) << status.message();
  }
  status = SegmentArea::Open("/dev/null", 4 * kSegment, kSegment, &area);
  EXPECT_NE(status.message().find("neither a directory nor a block device"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace segstore
}  // namespace stagio
