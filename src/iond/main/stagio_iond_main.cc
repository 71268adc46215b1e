// stagio-iond: the I/O-node daemon. See iond/command_line.h for the options and iond/server.h
// for what it does; this file adds the process around the server: configuration errors exit
// 2, signals, the ready file, and the stats file.
//
// Shutdown. SIGTERM and SIGINT are blocked in every thread and taken by sigwait() on the main
// thread, so no work runs in a signal handler: the main thread then stops the server (which
// flushes and fsyncs every file), writes the stats, and exits 0, or 1 if some data could not be
// flushed (the message names the files).
#include <malloc.h>
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "iond/atomic_file.h"
#include "iond/command_line.h"
#include "iond/config.h"
#include "iond/descriptor_limit.h"
#include "iond/log.h"
#include "iond/server.h"
#include "iond/token.h"

namespace {

using stagio::Status;
using stagio::iond::LogToStderr;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

std::string Describe(const stagio::iond::IondConfig& config,
                     const std::vector<stagio::net::Address>& bound) {
  std::string listeners;
  for (const auto& address : bound) {
    listeners += (listeners.empty() ? "" : ", ") + address.ToString();
  }
  return "serving " + config.root + " on " + listeners + " (cache " +
         std::to_string(config.cache_size >> 20) + " MiB, blocks of " +
         std::to_string(config.block_size >> 10) + " KiB, token " +
         (config.token.empty() ? "off" : "required") + ")";
}

// A read's reply is a buffer of up to 4 MiB (a client's long read comes as such pieces). By
// default glibc gives buffers that large back to the kernel when they are freed (as mappings of
// their own, or by trimming a thread's arena), so every reply page-faulted and zeroed fresh
// pages: a quarter of the daemon's time while it served a 64 MiB pass from its cache to one
// client (0.16 s a pass; 0.12 s with this). Kept in the heap, freed replies are reused. The
// price: the heap does not shrink back from its peak (each arena keeps up to 64 MiB free at
// its top), which beside a block cache of hundreds of MiB is small. If glibc refuses, the
// daemon runs as before.
void KeepReplyBuffersInTheHeap() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: any reply, up to 16 MiB
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

// Waits for SIGTERM or SIGINT (blocked beforehand) and returns its name.
const char* WaitForShutdownSignal(const sigset_t& signals) {
  int signal_number = 0;
  while (sigwait(&signals, &signal_number) != 0) {
  }
  return signal_number == SIGINT ? "SIGINT" : "SIGTERM";
}

}  // namespace

int main(int argc, char** argv) {
  stagio::iond::CommandLine line;
  const int parsed = stagio::iond::ParseCommandLine(argc, argv, &line, std::cout, std::cerr);
  if (parsed >= 0) return parsed;
  stagio::iond::IondConfig config;
  Status status =
      stagio::iond::LoadConfig(line, std::getenv(stagio::iond::kTokenVariable), &config);
  if (!status.ok()) {
    LogToStderr(status.message());
    return kExitUsage;
  }
  if (line.print_config) {
    std::cout << stagio::iond::ConfigToJson(config).dump(2) << "\n";
    return 0;
  }

  KeepReplyBuffersInTheHeap();
  // Before any thread starts, so that every thread inherits the mask and only sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  for (const std::string& line :
       stagio::iond::RaiseDescriptorLimit(stagio::iond::DescriptorsNeeded(config))) {
    LogToStderr(line);
  }

  stagio::iond::IondServer server(config);
  status = server.Start();
  if (!status.ok()) {
    LogToStderr("cannot start: " + status.message());
    return kExitFailure;
  }
  if (!config.ready_file.empty()) {
    status = stagio::iond::WriteFileAtomically(
        config.ready_file, stagio::iond::ReadyFileText(server.bound_addresses()));
    if (!status.ok()) {
      LogToStderr("ready file: " + status.message());
      server.Stop();
      return kExitFailure;
    }
  }
  LogToStderr(Describe(config, server.bound_addresses()));

  LogToStderr(std::string(WaitForShutdownSignal(signals)) +
              ": shutting down (finishing requests, flushing every file)");
  const Status stopped = server.Stop();
  if (!config.stats.empty()) {
    status = stagio::iond::WriteFileAtomically(config.stats, server.StatsJson().dump(2) + "\n");
    if (!status.ok()) LogToStderr("stats file: " + status.message());
  }
  if (!stopped.ok()) {
    LogToStderr(stopped.message());
    return kExitFailure;
  }
  LogToStderr("stopped; every file flushed and synced");
  return 0;
}
