// Path confinement: the daemon serves regular files beneath its root, and nothing a client
// names with `..`, a symlink or a relative path gets it out, even while the client swaps a
// directory component for a symlink as the daemon opens; through RootGuard, with the kernel's
// openat2 and with the component walk of kernels without it, and through the protocol.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "iond/root_guard.h"
#include "support/iond_fixture.h"

namespace stagio {
namespace iond {
namespace {

using namespace iond_test;  // the fixture's words: Client, ServerFixture, ReadFile, ...

TEST(IondRootGuardTest, InsideIsByWholeComponents) {
  EXPECT_TRUE(IsInside("/data", "/data"));
  EXPECT_TRUE(IsInside("/data", "/data/x"));
  EXPECT_FALSE(IsInside("/data", "/data2/x"));
  EXPECT_FALSE(IsInside("/data", "/dat"));
  EXPECT_TRUE(IsInside("/", "/etc/passwd"));
}

std::string MethodName(const ::testing::TestParamInfo<BeneathMethod>& info) {
  return info.param == BeneathMethod::kKernel ? "Openat2" : "Walk";
}

// Each test runs with openat2 and with the walk; openat2 only where the kernel has it.
class IondConfinementTest : public ::testing::TestWithParam<BeneathMethod> {
 protected:
  void SetUp() override {
    if (GetParam() == BeneathMethod::kKernel && !KernelOpensBeneath()) {
      GTEST_SKIP() << "this kernel has no openat2; the walk serves it";
    }
    // <dir>/root/{inside, sub/nested, sub/up -> ../inside, link_in -> inside,
    //             link_out -> <dir>/outside, abs_in -> <root>/inside, dir_out -> <dir>,
    //             loop_a -> loop_b -> loop_a, fifo}
    root_ = dir_.path() + "/root";
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((root_ + "/sub").c_str(), 0755), 0);
    WriteFile(root_ + "/inside", "in");
    WriteFile(root_ + "/sub/nested", "nested");
    WriteFile(dir_.path() + "/outside", "secret");
    Link("../inside", root_ + "/sub/up");
    Link("inside", root_ + "/link_in");
    Link(dir_.path() + "/outside", root_ + "/link_out");
    Link(root_ + "/inside", root_ + "/abs_in");
    Link(dir_.path(), root_ + "/dir_out");
    Link("../outside", root_ + "/rel_out");
    Link("loop_b", root_ + "/loop_a");
    Link("loop_a", root_ + "/loop_b");
    ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0600), 0);
    ASSERT_OK(RootGuard::Create(root_, &guard_, GetParam()));
  }
  static void Link(const std::string& target, const std::string& name) {
    ASSERT_EQ(::symlink(target.c_str(), name.c_str()), 0) << name;
  }
  // The error message of opening `path`, or "ok:<its content>".
  std::string Open(const std::string& path) {
    OpenedFile file;
    const Status status = guard_.Open(path, &file);
    if (!status.ok()) return status.message();
    char buffer[64] = {};
    const ssize_t got = ::pread(file.fd.get(), buffer, sizeof(buffer) - 1, 0);
    return "ok:" + std::string(buffer, got > 0 ? static_cast<size_t>(got) : 0);
  }
  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  TempDir dir_;
  std::string root_;
  RootGuard guard_;
};

TEST_P(IondConfinementTest, FilesBeneathTheRootOpen) {
  EXPECT_EQ(Open(root_ + "/inside"), "ok:in");
  EXPECT_EQ(Open(root_ + "/sub/nested"), "ok:nested");
  EXPECT_EQ(Open(root_ + "//sub/./nested"), "ok:nested");
  EXPECT_EQ(Open(root_ + "/sub/../inside"), "ok:in");
  // Relative links that stay beneath the root are followed.
  EXPECT_EQ(Open(root_ + "/link_in"), "ok:in");
  EXPECT_EQ(Open(root_ + "/sub/up"), "ok:in");
}

TEST_P(IondConfinementTest, TwoNamesOfOneFileAreOneFile) {
  OpenedFile a, b;
  ASSERT_OK(guard_.Open(root_ + "/inside", &a));
  ASSERT_OK(guard_.Open(root_ + "/link_in", &b));
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.inode, b.inode);
  EXPECT_TRUE(a.writable);
}

TEST_P(IondConfinementTest, EscapesAreRefused) {
  const std::string outside = "outside the daemon's root";
  EXPECT_TRUE(Has(Open(root_ + "/../outside"), outside));
  EXPECT_TRUE(Has(Open(root_ + "/sub/../../outside"), outside));
  EXPECT_TRUE(Has(Open(root_ + "/link_out"), outside));
  EXPECT_TRUE(Has(Open(root_ + "/rel_out"), outside));
  EXPECT_TRUE(Has(Open(root_ + "/dir_out/outside"), outside));
  EXPECT_TRUE(Has(Open(root_ + "/dir_out/root/inside"), outside));
  EXPECT_TRUE(Has(Open("/etc/passwd"), outside));
  // An absolute link is refused even where it points beneath the root: where it leads is
  // decided by whoever can rename the root's parents, not by the root.
  EXPECT_TRUE(Has(Open(root_ + "/abs_in"), outside));
  // Whether a file outside exists is not revealed either.
  EXPECT_TRUE(Has(Open(root_ + "/../no_such_file"), outside));
  EXPECT_TRUE(Has(Open("/no/such/file"), outside));
}

TEST_P(IondConfinementTest, RelativeMissingLoopingAndNonRegularPathsAreRefused) {
  EXPECT_TRUE(Has(Open("inside"), "is not absolute"));
  EXPECT_TRUE(Has(Open(""), "is not absolute"));
  EXPECT_TRUE(Has(Open(root_ + "/missing"), "no such file"));
  EXPECT_TRUE(Has(Open(root_ + "/sub"), "not a regular file"));
  EXPECT_TRUE(Has(Open(root_), "not a regular file"));
  EXPECT_TRUE(Has(Open(root_ + "/fifo"), "not a regular file"));  // and it does not block
  EXPECT_TRUE(Has(Open(root_ + "/loop_a"), "Too many levels of symbolic links"));
  EXPECT_TRUE(Has(Open(root_ + "/inside/x"), "Not a directory"));
}

TEST_P(IondConfinementTest, AFileTheDaemonMayOnlyReadOpensReadOnly) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write any file";
  ASSERT_EQ(::chmod((root_ + "/inside").c_str(), 0444), 0);
  OpenedFile file;
  ASSERT_OK(guard_.Open(root_ + "/inside", &file));
  EXPECT_FALSE(file.writable);
}

// The attack: a client that can create entries under the root swaps a directory component
// between a real directory and a symlink to a directory outside (atomically, with
// RENAME_EXCHANGE), as fast as it can, while the daemon opens <root>/swapped/file. The real
// directory's file holds "inside"; the outside one holds "secret". Every open must either fail
// or get the inside file; writes must never reach the outside file. The swaps and opens must
// really interleave (both outcomes seen many times), or the test proves nothing.
class IondRootRaceTest : public IondConfinementTest {
 protected:
  struct Tally {
    int inside = 0;
    int refused = 0;
    int escaped = 0;
  };

  void SetUpRace() {
    outside_dir_ = dir_.path() + "/elsewhere";
    ASSERT_EQ(::mkdir(outside_dir_.c_str(), 0755), 0);
    WriteFile(outside_dir_ + "/file", "secret");
    ASSERT_EQ(::mkdir((root_ + "/swapped").c_str(), 0755), 0);
    WriteFile(root_ + "/swapped/file", "inside");
    Link(outside_dir_, root_ + "/spare");
    struct stat info {};
    ASSERT_EQ(::stat((outside_dir_ + "/file").c_str(), &info), 0);
    outside_inode_ = info.st_ino;
  }

  // Swaps <root>/swapped and <root>/spare until `stop`.
  void Swap(const std::atomic<bool>& stop, std::atomic<long>* swaps) {
    const std::string a = root_ + "/swapped", b = root_ + "/spare";
    while (!stop.load()) {
      if (::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(),
                    /*RENAME_EXCHANGE=*/2) == 0) {
        ++*swaps;
      }
    }
  }

  // Opens <root>/swapped/file for `duration`; with `write`, writes through every descriptor.
  Tally Race(std::chrono::milliseconds duration, bool write) {
    std::atomic<bool> stop{false};
    std::atomic<long> swaps{0};
    std::thread swapper([&] { Swap(stop, &swaps); });
    Tally tally;
    const auto end = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < end) {
      OpenedFile file;
      if (!guard_.Open(root_ + "/swapped/file", &file).ok()) {
        ++tally.refused;
        continue;
      }
      if (file.inode == outside_inode_) ++tally.escaped;
      if (file.inode != outside_inode_) ++tally.inside;
      if (write) {
        EXPECT_EQ(::pwrite(file.fd.get(), "w", 1, 0), 1);
      }
    }
    stop = true;
    swapper.join();
    EXPECT_GT(swaps.load(), 100) << "the swapper hardly ran";
    return tally;
  }

  std::string outside_dir_;
  ino_t outside_inode_ = 0;
};

TEST_P(IondRootRaceTest, SwappingADirectoryForASymlinkNeverEscapesOnRead) {
  SetUpRace();
  const Tally tally = Race(std::chrono::milliseconds(2500), /*write=*/false);
  EXPECT_EQ(tally.escaped, 0) << "opens that reached the file outside the root";
  // Both outcomes, many times: the race was real.
  EXPECT_GT(tally.inside, 50);
  EXPECT_GT(tally.refused, 50);
  EXPECT_EQ(ReadFile(outside_dir_ + "/file"), "secret");
}

TEST_P(IondRootRaceTest, SwappingADirectoryForASymlinkNeverEscapesOnWrite) {
  SetUpRace();
  const Tally tally = Race(std::chrono::milliseconds(2500), /*write=*/true);
  EXPECT_EQ(tally.escaped, 0);
  EXPECT_GT(tally.inside, 50);
  EXPECT_GT(tally.refused, 50);
  EXPECT_EQ(ReadFile(outside_dir_ + "/file"), "secret") << "a write reached the file outside";
}

INSTANTIATE_TEST_SUITE_P(Methods, IondConfinementTest,
                         ::testing::Values(BeneathMethod::kKernel, BeneathMethod::kWalk),
                         MethodName);
INSTANTIATE_TEST_SUITE_P(Methods, IondRootRaceTest,
                         ::testing::Values(BeneathMethod::kKernel, BeneathMethod::kWalk),
                         MethodName);

TEST(IondConfinementProtocolTest, OpenThroughTheDaemonIsConfined) {
  ServerFixture fixture;
  const std::string inside = fixture.MakeFile("data", "bytes");
  iond_test::WriteFile(fixture.dir() + "/secret", "secret");
  ASSERT_EQ(::symlink((fixture.dir() + "/secret").c_str(), (fixture.root() + "/link").c_str()),
            0);
  ASSERT_OK(fixture.Start());
  Client client;
  ASSERT_OK(Client::Connect(fixture.address(), "", &client));
  uint64_t handle = 0;
  const auto open = [&](const std::string& path) {
    return client.Open(path, net::FileAccess::kReadOnly, &handle);
  };
  const std::string outside = "outside the daemon's root";
  EXPECT_NE(open(fixture.root() + "/../secret").message().find(outside), std::string::npos);
  EXPECT_NE(open(fixture.root() + "/link").message().find(outside), std::string::npos);
  EXPECT_NE(open("data").message().find("not absolute"), std::string::npos);
  const Status missing = open(fixture.root() + "/missing");
  EXPECT_EQ(missing.code(), Status::Code::kNotFound) << missing.ToString();
  // None of those closed the connection; a file inside opens and reads.
  ASSERT_OK(open(inside));
  std::string data;
  ASSERT_OK(client.Read(handle, 0, 100, &data));
  EXPECT_EQ(data, "bytes");
}

}  // namespace
}  // namespace iond
}  // namespace stagio
