// IondConfig: the daemon's settings. They come from defaults, a JSON config file and the
// command line, in rising precedence; the file uses the command line's option names in
// snake_case (--cache-size is "cache_size"; "listen" is a list). ResolveConfig validates them
// as a whole, and every error names the setting and where it came from.
//
// The defaults follow seed 004. The cache should hold at least the sum of the client caches
// it serves (512 MiB: eight clients at the client default of 64 MiB); blocks are the client's
// default block size, so one client block is one daemon block; write-back is continuous (high
// and low water marks 0%), which the seed found best on the I/O node.
//
// The connection bounds keep peers that have not shown the token from costing much (see
// hello_gate.h). A stagio client sends its Hello right after connecting, so 10 s only covers a
// stalled or swapping client node, not the network; the Hello holds a version, the token and
// "host pid", a few hundred bytes, so 4 KiB leaves room for long tokens; 128 connections may
// wait for their Hello at once (a job's ranks connecting together wait their turn rather than
// be dropped, and a flood must open 128 connections within one client round trip to push a
// client out); 4096 clients are served at once, two threads each: one per client process and
// daemon, a few per core of the compute nodes a daemon serves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "net/address.h"

namespace stagio {
namespace iond {

constexpr uint16_t kDefaultPort = 7070;

struct IondConfig {
  std::vector<net::Address> listen;  // default 127.0.0.1:7070 (loopback only)
  std::string root;                  // required; canonical once resolved
  uint64_t cache_size = uint64_t{512} << 20;
  uint64_t block_size = uint64_t{1} << 20;
  double write_back_high = 0;  // percent of the cache
  double write_back_low = 0;
  uint64_t prefetch_blocks = 4;  // client blocks per read, each one aggregator stride further
  uint64_t io_threads = 4;       // prefetch jobs in flight to the backing file system
  uint64_t request_threads = 8;  // requests served at once, over all connections
  double hello_timeout = 10;           // seconds from accept for the whole Hello
  uint64_t hello_max_bytes = 4096;     // largest Hello payload
  uint64_t max_unauthenticated = 128;  // connections waiting for their Hello
  uint64_t max_connections = 4096;     // connections past Hello
  std::string token_file;        // where the token came from; empty: STAGIO_IOND_TOKEN or none
  std::string token;             // the secret; never printed
  std::string ready_file;        // empty: none
  std::string stats;             // stats JSON written at shutdown; empty: none
  // The segment store (segstore/segment_store.h): off unless segstore names a directory or a
  // block device. Sizes and the idle threshold follow seed 002; j and k are its parameters,
  // which the seed does not give (one pass of a pattern is enough to group it).
  std::string segstore;
  uint64_t segstore_size = uint64_t{1} << 30;
  uint64_t segstore_segment_size = uint64_t{16} << 20;
  uint64_t segstore_cache = uint64_t{128} << 20;
  uint64_t segstore_popularity_j = 1;
  uint64_t segstore_popularity_k = 4;
  double segstore_idle = 5;  // seconds
};

// What ResolveConfig reads. Command-line values arrive as strings (listen as a list of them);
// file values may be JSON numbers or strings ("512M").
struct ConfigSources {
  nlohmann::json file = nlohmann::json::object();
  std::string file_name;  // for messages; empty when there is no config file
  nlohmann::json command_line = nlohmann::json::object();
  const char* env_token = nullptr;  // the value of STAGIO_IOND_TOKEN, if set
};

// Merges and validates; on error, *config is unspecified and the message names the setting.
Status ResolveConfig(const ConfigSources& sources, IondConfig* config);

// Parses a config file into *settings (a JSON object).
Status ReadConfigFile(const std::string& path, nlohmann::json* settings);

// A listener that other machines can reach needs a token: without one, anyone on the network
// could read and write every file under the root.
Status CheckTokenForListeners(const IondConfig& config);

// The resolved configuration, as --print-config shows it: sizes in bytes, the token only as
// "set" or "unset".
nlohmann::json ConfigToJson(const IondConfig& config);

// One config key, for the command-line parser: its option is "--" + key with '-' for '_'.
struct ConfigKey {
  const char* key;
  const char* value_name;  // SIZE, N, PCT, SEC, ADDR, DIR, FILE
  const char* help;
};
const std::vector<ConfigKey>& ConfigKeys();
std::string OptionName(const std::string& key);

}  // namespace iond
}  // namespace stagio
