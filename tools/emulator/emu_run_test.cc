// The emulator end to end: runs emulator_io_probe (and a few other commands) under stagio-emu or
// the bare shim, and checks the counters, never the wall time. The probe's requests come one
// after another from one thread (a forked child's while the parent waits), so each arrives on an
// idle device and is charged exactly latency + TransferNs(bytes): the expected charged_ns is
// computed here with the model, to the nanosecond.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "device_model.h"
#include "emu_segment.h"

namespace stagio::emu {
namespace {

constexpr int64_t kProbeSize = 4096;

struct ExpectedRequest {
  RequestKind kind;
  int64_t bytes;
};

// What emulator_io_probe must be charged for, in its order (see emu_io_probe.c).
std::vector<ExpectedRequest> ProbeRequests() {
  const int64_t size = kProbeSize;
  std::vector<ExpectedRequest> requests;
  // pwrite, pwrite64, write, writev, pwritev, pwritev2
  for (int i = 0; i < 6; ++i) requests.push_back({RequestKind::kWrite, size});
  // fsync, fdatasync
  requests.push_back({RequestKind::kSync, 0});
  requests.push_back({RequestKind::kSync, 0});
  // pread, pread64, read, readv, preadv, preadv2
  for (int i = 0; i < 6; ++i) requests.push_back({RequestKind::kRead, size});
  requests.push_back({RequestKind::kRead, 0});         // at end of file
  requests.push_back({RequestKind::kRead, size / 2});  // short read
  // (the failed read is not charged)
  requests.push_back({RequestKind::kRead, size});   // through dup
  requests.push_back({RequestKind::kRead, size});   // through openat
  requests.push_back({RequestKind::kWrite, size});  // after creat
  requests.push_back({RequestKind::kRead, size});   // through a symlink from outside
  requests.push_back({RequestKind::kRead, size});   // forked child, pread
  requests.push_back({RequestKind::kRead, size});   // forked child, pread64
  requests.push_back({RequestKind::kRead, size});   // opened by a raw syscall
  // (nothing outside, in the sibling directory, after dup2, on a reused number or opened
  // outside by a raw syscall is charged)
  return requests;
}

struct Expected {
  uint64_t requests = 0, read_requests = 0, write_requests = 0, sync_requests = 0;
  uint64_t bytes_read = 0, bytes_written = 0, charged_ns = 0;
};

Expected ExpectedCounters(const DeviceParams& params) {
  const DeviceState device = MakeDeviceState(params);
  Expected expected;
  for (const ExpectedRequest& request : ProbeRequests()) {
    expected.requests += 1;
    expected.charged_ns += device.latency_ns + TransferNs(device, request.bytes);
    switch (request.kind) {
      case RequestKind::kRead:
        expected.read_requests += 1;
        expected.bytes_read += request.bytes;
        break;
      case RequestKind::kWrite:
        expected.write_requests += 1;
        expected.bytes_written += request.bytes;
        break;
      case RequestKind::kSync: expected.sync_requests += 1; break;
    }
  }
  return expected;
}

void ExpectCounters(const EmuCounters& got, const Expected& want) {
  EXPECT_EQ(got.requests, want.requests);
  EXPECT_EQ(got.read_requests, want.read_requests);
  EXPECT_EQ(got.write_requests, want.write_requests);
  EXPECT_EQ(got.sync_requests, want.sync_requests);
  EXPECT_EQ(got.bytes_read, want.bytes_read);
  EXPECT_EQ(got.bytes_written, want.bytes_written);
  EXPECT_EQ(got.charged_ns, want.charged_ns);
}

EmuCounters CountersFromJson(const nlohmann::json& stats) {
  EmuCounters counters{};
  counters.requests = stats.at("requests");
  counters.read_requests = stats.at("read_requests");
  counters.write_requests = stats.at("write_requests");
  counters.sync_requests = stats.at("sync_requests");
  counters.bytes_read = stats.at("bytes_read");
  counters.bytes_written = stats.at("bytes_written");
  counters.charged_ns = stats.at("charged_ns");
  return counters;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Outcome {
  int status = -1;  // exit status, or 128 + signal
  pid_t pid = 0;
  std::string out;
  std::string err;
};

// Each test gets a scratch tree: emulated/ (the emulated directory) and outside/.
class EmulatorRun : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/stagio-emu-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    emulated_ = root_ + "/emulated";
    outside_ = root_ + "/outside";
    ASSERT_EQ(mkdir(emulated_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir(outside_.c_str(), 0755), 0);
  }
  void TearDown() override {
    const std::string remove = "rm -rf '" + root_ + "'";
    EXPECT_EQ(std::system(remove.c_str()), 0);
  }

  // Runs `argv` with `env` added to (or, with an empty value, removed from) the environment,
  // capturing its output in files so that no pipe can fill up.
  Outcome Run(const std::vector<std::string>& argv,
              const std::map<std::string, std::string>& env = {}) {
    const std::string out_path = root_ + "/stdout", err_path = root_ + "/stderr";
    std::vector<char*> words;
    for (const std::string& word : argv) words.push_back(const_cast<char*>(word.c_str()));
    words.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      for (const auto& [name, value] : env) {
        if (value.empty()) {
          unsetenv(name.c_str());
        } else {
          setenv(name.c_str(), value.c_str(), 1);
        }
      }
      const int out = open(out_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      const int err = open(err_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      dup2(out, STDOUT_FILENO);
      dup2(err, STDERR_FILENO);
      execv(words[0], words.data());
      _exit(111);
    }
    Outcome outcome;
    outcome.pid = pid;
    int status = 0;
    waitpid(pid, &status, 0);
    outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    outcome.out = ReadFile(out_path);
    outcome.err = ReadFile(err_path);
    return outcome;
  }

  // The environment a test starts from: none of the emulator's variables leak in from ours.
  static std::map<std::string, std::string> CleanEnv() {
    return {{"STAGIO_EMU_DIR", ""},        {"STAGIO_EMU_SHM", ""},
            {"STAGIO_EMU_LATENCY_MS", ""}, {"STAGIO_EMU_BANDWIDTH_MBPS", ""},
            {"STAGIO_EMU_PARALLEL", ""},   {"LD_PRELOAD", ""}};
  }

  std::vector<std::string> ProbeCommand() const {
    return {STAGIO_EMU_PROBE, emulated_, outside_, std::to_string(kProbeSize)};
  }

  std::string root_, emulated_, outside_;
};

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool SegmentExists(const std::string& name) {
  return access(("/dev/shm" + name).c_str(), F_OK) == 0;
}

TEST_F(EmulatorRun, ChargesExactlyWhatTheModelSays) {
  DeviceParams params;
  params.latency_ms = 0.5;
  params.bandwidth_mbps = 3;  // 4096 bytes: 1365333.33 ns, rounded up
  params.parallel = 2;
  const std::string stats_path = root_ + "/stats.json";
  const Outcome run =
      Run(Concat({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--latency-ms", "0.5",
                  "--bandwidth-mbps", "3", "--parallel", "2", "--stats", stats_path, "--"},
                 ProbeCommand()),
          CleanEnv());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");

  const nlohmann::json stats = nlohmann::json::parse(ReadFile(stats_path));
  EXPECT_EQ(stats.at("params").at("latency_ms"), 0.5);
  EXPECT_EQ(stats.at("params").at("bandwidth_mbps"), 3.0);
  EXPECT_EQ(stats.at("params").at("parallel"), 2);
  EXPECT_EQ(stats.at("params").at("dir"), emulated_);
  ExpectCounters(CountersFromJson(stats), ExpectedCounters(params));
  // The run's segment is gone.
  EXPECT_FALSE(SegmentExists("/stagio-emu-" + std::to_string(getuid()) + "-" +
                             std::to_string(run.pid)));
}

TEST_F(EmulatorRun, TheBareShimCreatesTheSegmentOnFirstUse) {
  DeviceParams params;
  params.latency_ms = 0.25;
  params.bandwidth_mbps = 7.5;
  params.parallel = 1;
  const std::string segment = "/stagio-emu-test-" + std::to_string(getpid());
  UnlinkSegment(segment.c_str());
  auto env = CleanEnv();
  env["LD_PRELOAD"] = STAGIO_EMU_SHIM;
  env["STAGIO_EMU_DIR"] = emulated_;
  env["STAGIO_EMU_SHM"] = segment;
  env["STAGIO_EMU_LATENCY_MS"] = "0.25";
  env["STAGIO_EMU_BANDWIDTH_MBPS"] = "7.5";
  env["STAGIO_EMU_PARALLEL"] = "1";
  const Outcome run = Run(ProbeCommand(), env);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");

  const SegmentOpenResult opened =
      OpenSegment(segment.c_str(), SegmentMode::kAttachExisting, DeviceParams());
  ASSERT_NE(opened.segment, nullptr) << opened.failed_step;
  EXPECT_EQ(opened.segment->params.latency_ms, 0.25);
  EXPECT_EQ(opened.segment->params.parallel, 1);
  ExpectCounters(ReadSegmentCounters(opened.segment), ExpectedCounters(params));
  CloseSegment(opened.segment);
  UnlinkSegment(segment.c_str());
}

TEST_F(EmulatorRun, AnInvalidVariableWarnsOnceAndUsesTheDefault) {
  const std::string segment = "/stagio-emu-test-invalid-" + std::to_string(getpid());
  UnlinkSegment(segment.c_str());
  auto env = CleanEnv();
  env["LD_PRELOAD"] = STAGIO_EMU_SHIM;
  env["STAGIO_EMU_DIR"] = emulated_;
  env["STAGIO_EMU_SHM"] = segment;
  env["STAGIO_EMU_LATENCY_MS"] = "0.1";
  env["STAGIO_EMU_BANDWIDTH_MBPS"] = "lots";
  env["STAGIO_EMU_PARALLEL"] = "99";
  const Outcome run = Run(ProbeCommand(), env);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err,
            "stagio-emu: ignoring STAGIO_EMU_BANDWIDTH_MBPS='lots' (not a number); using the "
            "default 200\n"
            "stagio-emu: ignoring STAGIO_EMU_PARALLEL='99' (parallel servers must be a whole "
            "number from 1 to 64); using the default 8\n");

  DeviceParams params;
  params.latency_ms = 0.1;
  const SegmentOpenResult opened =
      OpenSegment(segment.c_str(), SegmentMode::kAttachExisting, DeviceParams());
  ASSERT_NE(opened.segment, nullptr) << opened.failed_step;
  ExpectCounters(ReadSegmentCounters(opened.segment), ExpectedCounters(params));
  CloseSegment(opened.segment);
  UnlinkSegment(segment.c_str());
}

TEST_F(EmulatorRun, WithoutTheDirectoryTheShimChargesNothing) {
  const std::string segment = "/stagio-emu-test-nodir-" + std::to_string(getpid());
  auto env = CleanEnv();
  env["LD_PRELOAD"] = STAGIO_EMU_SHIM;
  env["STAGIO_EMU_SHM"] = segment;
  const Outcome run = Run(ProbeCommand(), env);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_FALSE(SegmentExists(segment));  // not even created
}

TEST_F(EmulatorRun, OtherProgramsRunUnchanged) {
  const std::string stats_path = root_ + "/stats.json";
  const Outcome shell = Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--stats", stats_path,
                             "--", "/bin/sh", "-c", "echo hello; ls / > /dev/null"},
                            CleanEnv());
  EXPECT_EQ(shell.status, 0) << shell.err;
  EXPECT_EQ(shell.out, "hello\n");
  EXPECT_EQ(nlohmann::json::parse(ReadFile(stats_path)).at("requests"), 0);

  if (access("/usr/bin/python3", X_OK) == 0) {
    const Outcome python =
        Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--", "/usr/bin/python3", "-c",
             "import json, os; print(json.dumps(sorted(os.listdir('/'))) != '')"},
            CleanEnv());
    EXPECT_EQ(python.status, 0) << python.err;
    EXPECT_EQ(python.out, "True\n");
  }
}

TEST_F(EmulatorRun, ExitsWithTheCommandsStatus) {
  EXPECT_EQ(Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--", "/bin/sh", "-c", "exit 3"},
                CleanEnv())
                .status,
            3);
  EXPECT_EQ(Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--", "/bin/sh", "-c", "kill -TERM $$"},
                CleanEnv())
                .status,
            128 + SIGTERM);
}

TEST_F(EmulatorRun, ReportsBadInvocationsClearly) {
  const Outcome no_dir = Run({STAGIO_EMU_LAUNCHER, "--", "/bin/true"}, CleanEnv());
  EXPECT_EQ(no_dir.status, 2);
  EXPECT_NE(no_dir.err.find("give --dir DIR or set STAGIO_EMU_DIR"), std::string::npos)
      << no_dir.err;

  const Outcome missing_dir =
      Run({STAGIO_EMU_LAUNCHER, "--dir", root_ + "/missing", "--", "/bin/true"}, CleanEnv());
  EXPECT_EQ(missing_dir.status, 2);
  EXPECT_NE(missing_dir.err.find("missing: No such file or directory"), std::string::npos)
      << missing_dir.err;

  const Outcome bad_option = Run(
      {STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--latency-ms", "soon", "--", "/bin/true"},
      CleanEnv());
  EXPECT_EQ(bad_option.status, 2);
  EXPECT_NE(bad_option.err.find("--latency-ms 'soon': not a number"), std::string::npos)
      << bad_option.err;

  auto env = CleanEnv();
  env["STAGIO_EMU_PARALLEL"] = "0";
  const Outcome bad_env = Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--", "/bin/true"}, env);
  EXPECT_EQ(bad_env.status, 2);
  EXPECT_NE(bad_env.err.find("STAGIO_EMU_PARALLEL='0' (from the environment): parallel"),
            std::string::npos)
      << bad_env.err;

  const Outcome not_a_command =
      Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--", "no-such-command-for-stagio-emu"},
          CleanEnv());
  EXPECT_EQ(not_a_command.status, 127);
  EXPECT_NE(not_a_command.err.find("cannot run 'no-such-command-for-stagio-emu': No such file"),
            std::string::npos)
      << not_a_command.err;

  const Outcome no_command = Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_}, CleanEnv());
  EXPECT_EQ(no_command.status, 2);
  EXPECT_NE(no_command.err.find("no command to run"), std::string::npos) << no_command.err;
}

TEST_F(EmulatorRun, OptionsFallBackToTheEnvironmentAndPrintResolved) {
  auto env = CleanEnv();
  env["STAGIO_EMU_DIR"] = emulated_ + "/.";
  env["STAGIO_EMU_LATENCY_MS"] = "0.1";
  env["STAGIO_EMU_PARALLEL"] = "3";
  const Outcome run =
      Run({STAGIO_EMU_LAUNCHER, "--parallel", "4", "--print-config"}, env);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json config = nlohmann::json::parse(run.out);
  EXPECT_EQ(config.at("dir"), emulated_);
  EXPECT_EQ(config.at("latency_ms"), 0.1);
  EXPECT_EQ(config.at("bandwidth_mbps"), 200.0);
  EXPECT_EQ(config.at("parallel"), 4);  // the command line wins
  EXPECT_EQ(config.at("shim"), STAGIO_EMU_SHIM);
}

TEST_F(EmulatorRun, ConcurrentThreadsShareTheDevice) {
  constexpr int kThreads = 4, kReads = 10;
  constexpr int64_t kSize = 20000;
  const std::string stats_path = root_ + "/stats.json";
  const Outcome run = Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--latency-ms", "0.2",
                           "--bandwidth-mbps", "100", "--parallel", "8", "--stats", stats_path,
                           "--", STAGIO_EMU_THREAD_PROBE, emulated_, std::to_string(kThreads),
                           std::to_string(kReads), std::to_string(kSize)},
                          CleanEnv());
  ASSERT_EQ(run.status, 0) << run.err;
  const EmuCounters got = CountersFromJson(nlohmann::json::parse(ReadFile(stats_path)));
  EXPECT_EQ(got.requests, 1u + kThreads * (kReads + 1));
  EXPECT_EQ(got.read_requests, uint64_t{kThreads * kReads});
  EXPECT_EQ(got.write_requests, 1u);
  EXPECT_EQ(got.sync_requests, uint64_t{kThreads});
  EXPECT_EQ(got.bytes_read, uint64_t{kThreads * kReads * kSize});
  EXPECT_EQ(got.bytes_written, uint64_t{kSize});

  // Each request costs at least what it costs on an idle device. How much more depends on how
  // the threads were scheduled (the order in which they reach the model), so no upper bound.
  DeviceParams params;
  params.latency_ms = 0.2;
  params.bandwidth_mbps = 100;
  const DeviceState device = MakeDeviceState(params);
  const uint64_t data_requests = 1 + kThreads * kReads;
  EXPECT_GE(got.charged_ns,
            got.requests * device.latency_ns + data_requests * TransferNs(device, kSize));
}

// ROMIO's own calls through mpiexec and hydra: every rank charges the one segment.
TEST_F(EmulatorRun, ChargesMpiIoUnderMpiexec) {
  const std::string stats_path = root_ + "/stats.json";
  const Outcome run = Run({STAGIO_EMU_LAUNCHER, "--dir", emulated_, "--latency-ms", "0.1",
                           "--bandwidth-mbps", "2000", "--stats", stats_path, "--",
                           STAGIO_EMU_MPIEXEC, "-n", "2", STAGIO_EMU_DEMO,
                           emulated_ + "/demo.dat", "2", "64", "0"},
                          CleanEnv());
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  const nlohmann::json stats = nlohmann::json::parse(ReadFile(stats_path));
  const uint64_t file_size = 2 /*ranks*/ * 2 /*phases*/ * 64 * 1024;
  EXPECT_GE(stats.at("bytes_written").get<uint64_t>(), file_size);
  EXPECT_GE(stats.at("bytes_read").get<uint64_t>(), file_size);
  EXPECT_GT(stats.at("write_requests").get<uint64_t>(), 0u);
  EXPECT_GT(stats.at("charged_ns").get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace stagio::emu
