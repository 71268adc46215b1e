// Path confinement: the daemon serves existing regular files under its root, and nothing a
// client names with `..`, a symlink or a relative path gets it out; through RootGuard and
// through the protocol.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

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

class IondConfinementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // <dir>/root/{inside, sub/nested, link_out -> <dir>/outside, link_in -> inside}
    root_ = dir_.path() + "/root";
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((root_ + "/sub").c_str(), 0755), 0);
    WriteFile(root_ + "/inside", "in");
    WriteFile(root_ + "/sub/nested", "nested");
    WriteFile(dir_.path() + "/outside", "secret");
    ASSERT_EQ(::symlink((dir_.path() + "/outside").c_str(), (root_ + "/link_out").c_str()), 0);
    ASSERT_EQ(::symlink("inside", (root_ + "/link_in").c_str()), 0);
    ASSERT_EQ(::symlink(dir_.path().c_str(), (root_ + "/dir_out").c_str()), 0);
    ASSERT_OK(RootGuard::Create(root_, &guard_));
  }
  // The error message of resolving `path`, or "ok:<resolved>".
  std::string Resolve(const std::string& path) {
    std::string resolved;
    const Status status = guard_.Resolve(path, &resolved);
    return status.ok() ? "ok:" + resolved : status.message();
  }

  TempDir dir_;
  std::string root_;
  RootGuard guard_;
};

TEST_F(IondConfinementTest, FilesInsideResolve) {
  EXPECT_EQ(Resolve(root_ + "/inside"), "ok:" + guard_.root() + "/inside");
  EXPECT_EQ(Resolve(root_ + "/sub/nested"), "ok:" + guard_.root() + "/sub/nested");
  EXPECT_EQ(Resolve(root_ + "/sub/../inside"), "ok:" + guard_.root() + "/inside");
  // A symlink that stays inside resolves to its target: both names share one daemon file.
  EXPECT_EQ(Resolve(root_ + "/link_in"), "ok:" + guard_.root() + "/inside");
}

TEST_F(IondConfinementTest, EscapesAreRefused) {
  const std::string outside = "outside the daemon's root";
  EXPECT_NE(Resolve(root_ + "/../outside").find(outside), std::string::npos);
  EXPECT_NE(Resolve(root_ + "/sub/../../outside").find(outside), std::string::npos);
  EXPECT_NE(Resolve(root_ + "/link_out").find(outside), std::string::npos);
  EXPECT_NE(Resolve(root_ + "/dir_out/outside").find(outside), std::string::npos);
  EXPECT_NE(Resolve("/etc/passwd").find(outside), std::string::npos);
  // Whether a file outside exists is not revealed either.
  EXPECT_NE(Resolve(root_ + "/../no_such_file").find(outside), std::string::npos);
  EXPECT_NE(Resolve("/no/such/file").find(outside), std::string::npos);
}

TEST_F(IondConfinementTest, RelativeMissingAndNonRegularPathsAreRefused) {
  EXPECT_NE(Resolve("inside").find("is not absolute"), std::string::npos);
  EXPECT_NE(Resolve("").find("is not absolute"), std::string::npos);
  EXPECT_NE(Resolve(root_ + "/missing").find("no such file"), std::string::npos);
  EXPECT_NE(Resolve(root_ + "/sub").find("not a regular file"), std::string::npos);
  EXPECT_NE(Resolve(root_).find("not a regular file"), std::string::npos);
}

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
