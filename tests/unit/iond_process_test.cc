// The stagio-iond executable: --print-config, configuration errors (exit 2), the ready file,
// and SIGTERM: it finishes, flushes and syncs every file, writes its stats and exits 0.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/iond_fixture.h"

extern char** environ;

namespace stagio {
namespace iond {
namespace {

using iond_test::Client;
using iond_test::ReadFile;
using iond_test::TempDir;
using iond_test::WriteFile;

// Starts stagio-iond with `args`, its stdout and stderr going to files in `dir`.
pid_t Spawn(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), STAGIO_IOND_EXECUTABLE);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir + "/stdout").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir + "/stderr").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int ExitStatus(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int RunDaemon(const std::string& dir, std::vector<std::string> args) {
  const pid_t pid = Spawn(dir, std::move(args));
  return pid < 0 ? -1 : ExitStatus(pid);
}

TEST(IondProcessTest, PrintConfigShowsTheResolvedConfiguration) {
  TempDir dir;
  WriteFile(dir.path() + "/token", "t0ken\n");
  ASSERT_EQ(RunDaemon(dir.path(), {"--root", dir.path(), "--cache-size", "2G", "--token-file",
                             dir.path() + "/token", "--listen", "0.0.0.0:0", "--max-connections",
                             "100", "--hello-timeout", "2.5", "--print-config"}),
            0);
  const nlohmann::json printed = nlohmann::json::parse(ReadFile(dir.path() + "/stdout"));
  EXPECT_EQ(printed["cache_size"], uint64_t{2} << 30);
  EXPECT_EQ(printed["max_connections"], 100u);
  EXPECT_EQ(printed["hello_timeout"], 2.5);
  EXPECT_EQ(printed["max_unauthenticated"], 128u);
  EXPECT_EQ(printed["hello_max_bytes"], 4096u);
  EXPECT_EQ(printed["listen"], nlohmann::json({"0.0.0.0:0"}));
  EXPECT_EQ(printed["token"], "set");
  EXPECT_EQ(ReadFile(dir.path() + "/stdout").find("t0ken"), std::string::npos);
}

TEST(IondProcessTest, ConfigurationErrorsExitTwoWithAMessage) {
  TempDir dir;
  EXPECT_EQ(RunDaemon(dir.path(), {"--root", dir.path(), "--write-back-high", "150"}), 2);
  EXPECT_EQ(ReadFile(dir.path() + "/stderr"),
            "stagio-iond: --write-back-high: expected a percentage from 0 to 100, got \"150\"\n");
  EXPECT_EQ(RunDaemon(dir.path(), {"--root", dir.path(), "--listen", "0.0.0.0:0"}), 2);
  EXPECT_NE(ReadFile(dir.path() + "/stderr").find("no token is set"), std::string::npos);
  EXPECT_EQ(RunDaemon(dir.path(), {"--bogus"}), 2);
}

TEST(IondProcessTest, SigtermFlushesEverythingAndWritesStats) {
  TempDir dir;
  const std::string root = dir.path() + "/root";
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
  const std::string file = root + "/out";
  WriteFile(file, "");
  const std::string ready = dir.path() + "/ready";
  const std::string stats = dir.path() + "/stats.json";
  const pid_t pid = Spawn(dir.path(), {"--listen", "unix:" + dir.path() + "/s.sock", "--listen",
                                       "127.0.0.1:0", "--root", root, "--ready-file", ready,
                                       "--stats", stats, "--write-back-high", "100",
                                       "--write-back-low", "100", "--block-size", "4K"});
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(test_support::WaitUntil([&] { return ::access(ready.c_str(), F_OK) == 0; }))
      << ReadFile(dir.path() + "/stderr");
  const std::string addresses = ReadFile(ready);
  EXPECT_EQ(addresses.rfind("unix:" + dir.path() + "/s.sock\n127.0.0.1:", 0), 0u) << addresses;
  EXPECT_EQ(addresses.find("127.0.0.1:0\n"), std::string::npos) << "the real port, not 0";

  // Write through the TCP listener; with water marks at 100% the bytes stay in the cache.
  net::Address tcp;
  ASSERT_OK(net::Address::Parse(addresses.substr(addresses.find('\n') + 1,
                                                 addresses.size() - addresses.find('\n') - 2),
                                &tcp));
  Client client;
  ASSERT_OK(Client::Connect(tcp, "", &client));
  uint64_t handle = 0;
  ASSERT_OK(client.Open(file, net::FileAccess::kReadWrite, &handle));
  const std::string bytes(10000, 'w');
  ASSERT_OK(client.Write(handle, 0, bytes));
  EXPECT_EQ(ReadFile(file), "");

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_EQ(ExitStatus(pid), 0) << ReadFile(dir.path() + "/stderr");
  EXPECT_EQ(ReadFile(file), bytes);
  const nlohmann::json counters = nlohmann::json::parse(ReadFile(stats));
  EXPECT_EQ(counters["requests"]["WriteBlocks"], 1u);
  EXPECT_EQ(counters["bytes_written"], bytes.size());
  EXPECT_EQ(counters["cache"]["dirty_bytes_flushed"], bytes.size());
  const std::string log = ReadFile(dir.path() + "/stderr");
  EXPECT_NE(log.find("stagio-iond: SIGTERM: shutting down"), std::string::npos) << log;
  EXPECT_EQ(::access((dir.path() + "/s.sock").c_str(), F_OK), -1) << "socket file removed";
}

}  // namespace
}  // namespace iond
}  // namespace stagio
