// stagio-emu: runs one command (usually `mpiexec ... program`) on emulated slow storage.
//
//   stagio-emu --dir DIR [--latency-ms 5] [--bandwidth-mbps 200] [--parallel 8] [--seek-ms 0]
//              [--link-latency-ms 0] [--link-bandwidth-mbps 0]
//              [--stats FILE] [--print-config] -- command args...
//
// It creates a fresh shared segment for this run (so no state leaks from an earlier one),
// initializes the device in it, exports the emulator's environment (emu_env.h) with
// libstagio_emu.so first in LD_PRELOAD, and runs the command. Everything the command starts
// inherits the environment and charges the same segment, so all ranks share one device. When
// the command ends it writes the counters as JSON, removes the segment and exits with the
// command's status (128 + signal number if a signal killed it).
// Each option not given on the command line is read from its environment twin
// (STAGIO_EMU_DIR, STAGIO_EMU_LATENCY_MS, ...), so a job script can set them once.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emu_env.h"
#include "emu_segment.h"

namespace stagio::emu {
namespace {

constexpr char kShimName[] = "libstagio_emu.so";

// What the command line gave; empty strings mean "not given".
struct CommandLine {
  std::string dir;
  std::string latency_ms;
  std::string bandwidth_mbps;
  std::string parallel;
  std::string seek_ms;
  std::string link_latency_ms;
  std::string link_bandwidth_mbps;
  std::string stats_path;
  bool print_config = false;
  std::vector<std::string> command;  // without the "--" that introduces it
};

// The run, fully resolved.
struct RunSettings {
  std::string dir;  // absolute, symlinks resolved
  DeviceParams params;
  std::string shim_path;
  std::string stats_path;
  std::vector<std::string> command;
};

// Failures of the launcher itself: reported once by main, which exits with 2.
struct UsageError {
  std::string message;
};

const char* OptionName(DeviceParam param) {
  switch (param) {
    case DeviceParam::kLatencyMs: return "--latency-ms";
    case DeviceParam::kBandwidthMbps: return "--bandwidth-mbps";
    case DeviceParam::kParallel: return "--parallel";
    case DeviceParam::kSeekMs: return "--seek-ms";
    case DeviceParam::kLinkLatencyMs: return "--link-latency-ms";
    case DeviceParam::kLinkBandwidthMbps: return "--link-bandwidth-mbps";
  }
  return "";
}

const std::string& OptionText(const CommandLine& line, DeviceParam param) {
  switch (param) {
    case DeviceParam::kLatencyMs: return line.latency_ms;
    case DeviceParam::kBandwidthMbps: return line.bandwidth_mbps;
    case DeviceParam::kParallel: return line.parallel;
    case DeviceParam::kSeekMs: return line.seek_ms;
    case DeviceParam::kLinkLatencyMs: return line.link_latency_ms;
    case DeviceParam::kLinkBandwidthMbps: return line.link_bandwidth_mbps;
  }
  return line.parallel;
}

// The command line wins over the environment twin, which wins over the default; a bad value is
// an error either way, naming where it came from.
DeviceParams ResolveParams(const CommandLine& line) {
  DeviceParams params;
  for (DeviceParam param : kAllDeviceParams) {
    std::string text = OptionText(line, param);
    std::string source = std::string(OptionName(param)) + " '" + text + "'";
    if (text.empty()) {
      const char* from_env = GetEnv(EnvVariable(param));
      if (from_env == nullptr) continue;
      text = from_env;
      source = std::string(EnvVariable(param)) + "='" + text + "' (from the environment)";
    }
    if (const char* why = SetDeviceParam(&params, param, text.c_str())) {
      throw UsageError{source + ": " + why};
    }
  }
  return params;
}

std::string ResolveDir(const CommandLine& line) {
  std::string dir = line.dir;
  std::string source = "--dir " + dir;
  if (dir.empty()) {
    const char* from_env = GetEnv(kDirVariable);
    if (from_env == nullptr) {
      throw UsageError{std::string("no directory to emulate: give --dir DIR or set ") +
                       kDirVariable};
    }
    dir = from_env;
    source = std::string(kDirVariable) + "=" + dir + " (from the environment)";
  }
  char resolved[PATH_MAX];
  if (realpath(dir.c_str(), resolved) == nullptr) {
    throw UsageError{source + ": " + std::strerror(errno)};
  }
  struct stat info;
  if (stat(resolved, &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw UsageError{source + ": not a directory"};
  }
  return resolved;
}

// The shim is built into the same directory as this executable.
std::string FindShim() {
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) throw UsageError{std::string("cannot find myself: ") + std::strerror(errno)};
  std::string path(self, static_cast<size_t>(length));
  path = path.substr(0, path.rfind('/') + 1) + kShimName;
  if (access(path.c_str(), R_OK) != 0) {
    throw UsageError{"cannot read " + path + " (" + std::strerror(errno) +
                     "): it is built next to stagio-emu"};
  }
  return path;
}

RunSettings Resolve(const CommandLine& line) {
  RunSettings settings;
  settings.dir = ResolveDir(line);
  settings.params = ResolveParams(line);
  settings.shim_path = FindShim();
  settings.stats_path = line.stats_path;
  settings.command = line.command;
  return settings;
}

nlohmann::ordered_json ParamsJson(const RunSettings& settings) {
  return {{"latency_ms", settings.params.latency_ms},
          {"bandwidth_mbps", settings.params.bandwidth_mbps},
          {"parallel", settings.params.parallel},
          {"seek_ms", settings.params.seek_ms},
          {"link_latency_ms", settings.params.link_latency_ms},
          {"link_bandwidth_mbps", settings.params.link_bandwidth_mbps},
          {"dir", settings.dir}};
}

nlohmann::ordered_json StatsJson(const RunSettings& settings, const EmuCounters& counters) {
  return {{"params", ParamsJson(settings)},
          {"requests", counters.requests},
          {"read_requests", counters.read_requests},
          {"write_requests", counters.write_requests},
          {"sync_requests", counters.sync_requests},
          {"bytes_read", counters.bytes_read},
          {"bytes_written", counters.bytes_written},
          {"charged_ns", counters.charged_ns}};
}

// A fresh segment named after this process. A leftover of the same name can only come from a
// dead run whose pid was reused, so it is removed and made again.
EmuSegment* CreateRunSegment(const std::string& name, const DeviceParams& params) {
  SegmentOpenResult opened = OpenSegment(name.c_str(), SegmentMode::kCreateNew, params);
  if (opened.segment == nullptr && opened.error == EEXIST) {
    UnlinkSegment(name.c_str());
    opened = OpenSegment(name.c_str(), SegmentMode::kCreateNew, params);
  }
  if (opened.segment == nullptr) {
    throw UsageError{"cannot create shared segment " + name + " (" + opened.failed_step + ": " +
                     std::strerror(opened.error) + ")"};
  }
  return opened.segment;
}

void ExportEnvironment(const RunSettings& settings, const std::string& segment_name) {
  setenv(kDirVariable, settings.dir.c_str(), 1);
  setenv(kShmVariable, segment_name.c_str(), 1);
  for (DeviceParam param : kAllDeviceParams) {
    char text[64];
    FormatDeviceParam(settings.params, param, text, sizeof(text));
    setenv(EnvVariable(param), text, 1);
  }
  std::string preload = settings.shim_path;
  if (const char* existing = GetEnv("LD_PRELOAD")) preload += std::string(":") + existing;
  setenv("LD_PRELOAD", preload.c_str(), 1);
}

// ---- Running the command.

volatile sig_atomic_t g_child = 0;

void ForwardToChild(int signal_number) {
  if (g_child > 0) kill(g_child, signal_number);
}

// Like system(): the terminal's SIGINT and SIGQUIT reach the command directly, so the launcher
// ignores them and outlives the command to clean up; SIGTERM and SIGHUP (a batch system's
// kill, a closed session) are passed on to the command.
void HandleSignalsWhileWaiting() {
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, nullptr);
  sigaction(SIGQUIT, &ignore, nullptr);
  struct sigaction forward = {};
  forward.sa_handler = ForwardToChild;
  sigaction(SIGTERM, &forward, nullptr);
  sigaction(SIGHUP, &forward, nullptr);
}

// Runs the command and returns its exit status, or 126/127 (as a shell would) when it cannot
// be started, after saying why.
int RunCommand(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);

  // exec's errno comes back through a close-on-exec pipe: end of file means exec succeeded.
  int exec_report[2];
  if (pipe2(exec_report, O_CLOEXEC) != 0) {
    throw UsageError{std::string("pipe: ") + std::strerror(errno)};
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) throw UsageError{std::string("fork: ") + std::strerror(errno)};
  if (child == 0) {
    close(exec_report[0]);
    execvp(argv[0], argv.data());
    const int error = errno;
    (void)!write(exec_report[1], &error, sizeof(error));
    _exit(127);
  }
  g_child = child;
  HandleSignalsWhileWaiting();
  close(exec_report[1]);
  int exec_error = 0;
  ssize_t got;
  do {
    got = read(exec_report[0], &exec_error, sizeof(exec_error));
  } while (got < 0 && errno == EINTR);
  close(exec_report[0]);

  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == static_cast<ssize_t>(sizeof(exec_error))) {
    std::cerr << "stagio-emu: cannot run '" << command[0] << "': " << std::strerror(exec_error)
              << "\n";
    return exec_error == ENOENT ? 127 : 126;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

int Run(const RunSettings& settings, bool print_config) {
  const std::string segment_name =
      "/stagio-emu-" + std::to_string(getuid()) + "-" + std::to_string(getpid());
  if (print_config) {
    nlohmann::ordered_json config = ParamsJson(settings);
    config["shm"] = segment_name;
    config["shim"] = settings.shim_path;
    config["command"] = settings.command;
    std::cout << config.dump(2) << std::endl;
  }
  if (settings.command.empty()) return 0;  // --print-config alone

  // Opened now so that a bad --stats path fails before the run, not after it.
  std::ofstream stats;
  if (!settings.stats_path.empty()) {
    stats.open(settings.stats_path, std::ios::trunc);
    if (!stats) {
      throw UsageError{"--stats " + settings.stats_path + ": " + std::strerror(errno)};
    }
  }
  EmuSegment* segment = CreateRunSegment(segment_name, settings.params);
  ExportEnvironment(settings, segment_name);
  int status;
  try {
    status = RunCommand(settings.command);
  } catch (...) {
    UnlinkSegment(segment_name.c_str());
    throw;
  }
  const EmuCounters counters = ReadSegmentCounters(segment);
  CloseSegment(segment);
  UnlinkSegment(segment_name.c_str());
  if (stats.is_open()) {
    stats << StatsJson(settings, counters).dump(2) << "\n";
    stats.close();
    if (!stats) {
      std::cerr << "stagio-emu: writing --stats " << settings.stats_path << " failed\n";
      if (status == 0) status = 1;
    }
  }
  return status;
}

}  // namespace
}  // namespace stagio::emu

int main(int argc, char** argv) {
  using stagio::emu::CommandLine;
  CommandLine line;
  CLI::App app{
      "Runs a command with the files under DIR on emulated slow shared storage: every read, "
      "write and sync there is charged by a device model (latency per request, one shared "
      "bandwidth, parallel servers) shared by all processes of the command.",
      "stagio-emu"};
  app.add_option("--dir", line.dir, "Directory whose files are emulated [env STAGIO_EMU_DIR]")
      ->type_name("DIR");
  app.add_option("--latency-ms", line.latency_ms,
                 "Latency per request, ms (default 5) [env STAGIO_EMU_LATENCY_MS]")
      ->type_name("MS");
  app.add_option("--bandwidth-mbps", line.bandwidth_mbps,
                 "Shared bandwidth, MB/s, 1 MB = 1e6 bytes (default 200) "
                 "[env STAGIO_EMU_BANDWIDTH_MBPS]")
      ->type_name("MBPS");
  app.add_option("--parallel", line.parallel,
                 "Parallel servers, 1 to 64 (default 8) [env STAGIO_EMU_PARALLEL]")
      ->type_name("N");
  app.add_option("--seek-ms", line.seek_ms,
                 "Seek per request, ms, paid on the shared channel before its bytes, so that "
                 "no two requests' seeks overlap, as on one disk behind all the servers "
                 "(default 0) [env STAGIO_EMU_SEEK_MS]")
      ->type_name("MS");
  app.add_option("--link-latency-ms", line.link_latency_ms,
                 "One-way latency of a network link every request crosses in series with the "
                 "device: out with the request (and a write's data), back with the reply (and "
                 "a read's data); default 0 [env STAGIO_EMU_LINK_LATENCY_MS]")
      ->type_name("MS");
  app.add_option("--link-bandwidth-mbps", line.link_bandwidth_mbps,
                 "Bandwidth of each way of that link, MB/s; 0 = unlimited (default). Both link "
                 "options 0: no link [env STAGIO_EMU_LINK_BANDWIDTH_MBPS]")
      ->type_name("MBPS");
  app.add_option("--stats", line.stats_path, "Write the counters as JSON to this file")
      ->type_name("FILE");
  app.add_flag("--print-config", line.print_config,
               "Print the resolved configuration as JSON before running");
  // Everything from the command on is the command's, even words that look like our options
  // or a later "--".
  app.prefix_command();
  app.footer("The command follows the options, after --.\n"
             "Example: stagio-emu --dir /scratch/run --stats emu.json -- mpiexec -n 4 ./app");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;  // --help is not an error
  }
  line.command = app.remaining();
  if (!line.command.empty() && line.command.front() == "--") {
    line.command.erase(line.command.begin());
  } else if (!line.command.empty() && line.command.front().rfind('-', 0) == 0) {
    // prefix_command() hands unknown options over as the command: catch the misspellings.
    std::cerr << "stagio-emu: unknown option " << line.command.front()
              << " (put the command after --)\nRun with --help for more information.\n";
    return 2;
  }

  if (line.command.empty() && !line.print_config) {
    std::cerr << "stagio-emu: no command to run (put it after --)\n"
              << "Run with --help for more information.\n";
    return 2;
  }
  try {
    return stagio::emu::Run(stagio::emu::Resolve(line), line.print_config);
  } catch (const stagio::emu::UsageError& error) {
    std::cerr << "stagio-emu: " << error.message << "\n";
    return 2;
  }
}
