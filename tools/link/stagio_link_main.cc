// stagio-link: a delaying TCP relay that emulates the link between compute nodes and an I/O
// node, where tc netem is not available.
//
//   stagio-link --listen HOST:PORT --to HOST:PORT --latency-ms L --bandwidth-mbps B
//               [--ready-file F] [--stats F]
//
// Every connection made to --listen is relayed to --to. Each direction is one wire shared by all
// connections: a chunk read from a socket departs when the wire is free, occupies it for
// size / bandwidth, and arrives the latency later (wire_model.h, the same rule as stagio-emu's
// --link-* stage). With --listen port 0 the relay takes a free port; --ready-file receives the
// bound address ("127.0.0.1:41234\n") once it listens, written whole (by rename), so a script
// can wait for the file to appear. SIGTERM or SIGINT: close every connection, write --stats (a
// JSON object of counters) and exit 0.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "endpoint.h"
#include "relay.h"

namespace stagio::link {
namespace {

struct Options {
  std::string listen;
  std::string to;
  double latency_ms = 0;
  double bandwidth_mbps = 0;
  std::string ready_file;
  std::string stats_file;
};

// Writes `text` to `path` through a temporary file and a rename: readers see all or nothing.
void WriteWhole(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out) throw EndpointError("cannot write " + temporary + ": " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw EndpointError("cannot rename " + temporary + ": " + std::strerror(errno));
  }
}

nlohmann::ordered_json StatsJson(const Options& options, const std::string& bound,
                                 const RelayStats& stats) {
  auto direction = [&](int d) {
    return nlohmann::ordered_json{{"bytes", stats.bytes[d]},
                                  {"chunks", stats.chunks[d]},
                                  {"wire_busy_s", stats.wire_busy_ns[d] / 1e9}};
  };
  return {{"params",
           {{"listen", bound},
            {"to", options.to},
            {"latency_ms", options.latency_ms},
            {"bandwidth_mbps", options.bandwidth_mbps}}},
          {"connections", stats.connections},
          {"connect_failures", stats.connect_failures},
          {"max_open_connections", stats.max_open_connections},
          {"to_target", direction(0)},
          {"to_client", direction(1)}};
}

// SIGTERM and SIGINT become readable events on a signalfd, which stops the relay's loop.
int BlockStopSignals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed peer is seen as an error on send, not a signal
  return signalfd(-1, &stop, SFD_CLOEXEC);
}

int Run(const Options& options) {
  if (!std::isfinite(options.latency_ms) || options.latency_ms < 0 ||
      !std::isfinite(options.bandwidth_mbps) || options.bandwidth_mbps < 0) {
    throw EndpointError("--latency-ms and --bandwidth-mbps must be numbers >= 0");
  }
  RelayConfig config;
  config.target = ParseEndpoint(options.to);
  config.latency_ms = options.latency_ms;
  config.bandwidth_mbps = options.bandwidth_mbps;
  const int stop_fd = BlockStopSignals();
  const int listen_fd = ListenOn(ParseEndpoint(options.listen));
  const std::string bound = LocalAddress(listen_fd);
  Relay relay(listen_fd, config);
  if (!options.ready_file.empty()) WriteWhole(options.ready_file, bound + "\n");
  relay.Run(stop_fd);
  close(stop_fd);
  if (!options.stats_file.empty()) {
    WriteWhole(options.stats_file, StatsJson(options, bound, relay.Stats()).dump(2) + "\n");
  }
  return 0;
}

}  // namespace
}  // namespace stagio::link

int main(int argc, char** argv) {
  stagio::link::Options options;
  CLI::App app{
      "Relays TCP connections from --listen to --to through an emulated link: each direction "
      "is one wire shared by all connections, with a latency and a bandwidth.",
      "stagio-link"};
  app.add_option("--listen", options.listen, "Address to accept on (port 0: any free port)")
      ->type_name("HOST:PORT")
      ->required();
  app.add_option("--to", options.to, "Address each connection is relayed to")
      ->type_name("HOST:PORT")
      ->required();
  app.add_option("--latency-ms", options.latency_ms, "One-way latency, ms (default 0)")
      ->type_name("MS");
  app.add_option("--bandwidth-mbps", options.bandwidth_mbps,
                 "Bandwidth of each direction, MB/s, 1 MB = 1e6 bytes; 0 = unlimited (default)")
      ->type_name("MBPS");
  app.add_option("--ready-file", options.ready_file,
                 "Write the bound HOST:PORT here once listening")
      ->type_name("FILE");
  app.add_option("--stats", options.stats_file, "Write the counters as JSON here at exit")
      ->type_name("FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  try {
    return stagio::link::Run(options);
  } catch (const stagio::link::EndpointError& error) {
    std::cerr << "stagio-link: " << error.what() << "\n";
    return 2;
  }
}
