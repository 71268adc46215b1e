// ReadSmallFile: a settings file is read whole; anything that is not a regular file of
// reasonable size is refused at once with a message that says what it is.
#include "common/small_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "support/test_helpers.h"

namespace stagio {
namespace {

class SmallFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/stagio_small_file_test.XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    FILE* file = std::fopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    std::fwrite(text.data(), 1, text.size(), file);
    std::fclose(file);
    return path;
  }
  // The error message of reading `path` with `limit`, or "ok:<contents>".
  std::string Read(const std::string& path, size_t limit = 100) {
    std::string contents = "untouched";
    const Status status = ReadSmallFile(path, limit, &contents);
    if (status.ok()) return "ok:" + contents;
    EXPECT_EQ(contents, "untouched") << "a failed read must leave the output alone";
    return status.message();
  }

  std::string dir_;
};

TEST_F(SmallFileTest, ReadsARegularFileWhole) {
  EXPECT_EQ(Read(Write("hints", "stagio_block_size 4K\n")), "ok:stagio_block_size 4K\n");
  EXPECT_EQ(Read(Write("empty", "")), "ok:");
  EXPECT_EQ(Read(Write("exact", std::string(100, 'x'))), "ok:" + std::string(100, 'x'));
}

TEST_F(SmallFileTest, RefusesWhatIsLargerThanTheLimit) {
  const std::string path = Write("large", std::string(101, 'x'));
  EXPECT_EQ(Read(path), path + " holds more than 100 bytes, which is not a settings file");
}

TEST_F(SmallFileTest, RefusesWhatIsNoFileWithoutWaitingOrReading) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(Read(fifo), fifo + " is a FIFO, not a file");  // nobody writes it: must not wait
  EXPECT_EQ(Read("/dev/zero"), "/dev/zero is a character device, not a file");
  EXPECT_EQ(Read("/dev/urandom"), "/dev/urandom is a character device, not a file");
  EXPECT_EQ(Read(dir_), dir_ + " is a directory, not a file");
}

TEST_F(SmallFileTest, SaysWhyAPathCannotBeOpened) {
  const std::string missing = dir_ + "/missing";
  EXPECT_EQ(Read(missing), missing + ": No such file or directory");
  if (::geteuid() != 0) {  // root reads anything
    const std::string secret = Write("secret", "x");
    ASSERT_EQ(::chmod(secret.c_str(), 0), 0);
    EXPECT_EQ(Read(secret), secret + ": Permission denied");
  }
}

}  // namespace
}  // namespace stagio
