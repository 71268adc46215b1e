// IondServer: the whole daemon as an object, so that tests run it in-process and the
// executable (main/stagio_iond_main.cc) only adds the command line, signals and files.
//
//   IondServer server(config);          // config from ResolveConfig (config.h)
//   Status status = server.Start();     // bound: server.bound_addresses()
//   ...
//   status = server.Stop();             // graceful; the error names unflushed files
//
// Start binds every listener and starts the accept thread, the Hello gate's thread, the request
// threads and the I/O thread; it refuses a listener other machines can reach when no token is
// set. New sockets wait in the gate (hello_gate.h, at most max_unauthenticated of them, without
// threads) until their Hello is accepted; then each gets a Connection (two threads), at most
// max_connections of them, a count that the sockets in the gate never take from. Stop stops
// accepting, closes the sockets still in the gate, lets every connection finish the requests in
// flight, closes the files the clients left open, writes back every dirty block and fsyncs
// every file.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "iond/acceptor.h"
#include "iond/config.h"
#include "iond/connection.h"
#include "iond/file_service.h"
#include "iond/hello_gate.h"
#include "iond/log.h"
#include "iond/request_pool.h"
#include "iond/server_stats.h"
#include "net/address.h"

namespace stagio {
namespace iond {

class IondServer {
 public:
  explicit IondServer(IondConfig config, LogSink log = LogToStderr);
  ~IondServer();  // Stop, if Start succeeded and Stop was not called
  IondServer(const IondServer&) = delete;
  IondServer& operator=(const IondServer&) = delete;

  Status Start();
  Status Stop();

  // The listeners' addresses, as bound (real ports for port 0). Valid after Start.
  const std::vector<net::Address>& bound_addresses() const { return acceptor_.bound(); }
  const IondConfig& config() const { return config_; }
  // The stats file's content: requests per message, bytes, connections, and the cache's
  // counters summed over files.
  nlohmann::json StatsJson() const;

  // The daemon's files, cache and I/O thread (tests look at cached blocks through it, and wait
  // for prefetches with io_thread().WaitIdle()). Valid after Start.
  FileService& files() { return *files_; }
  ServerStats& stats() { return stats_; }
  // The sockets that have not said Hello yet (tests count them and their bytes). After Start.
  const HelloGate& hello_gate() const { return *gate_; }

 private:
  // From the gate: starts a Connection for a client whose Hello was accepted, or says why not
  // (max_connections are served already).
  Status Serve(GreetedSocket* greeted);
  // Joins and forgets finished connections; all of them, waiting, with `everyone`.
  void Reap(bool everyone);

  const IondConfig config_;
  const LogSink log_;
  ServerStats stats_;
  std::unique_ptr<FileService> files_;
  std::unique_ptr<RequestPool> pool_;
  ConnectionEnv env_;
  std::unique_ptr<HelloGate> gate_;
  Acceptor acceptor_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<Connection>> connections_;
  std::vector<std::string> unflushed_;  // "path: error", from connections that ended
  bool running_ = false;
};

}  // namespace iond
}  // namespace stagio
