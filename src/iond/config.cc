#include "iond/config.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/config.h"
#include "common/small_file.h"
#include "iond/hello.h"
#include "iond/root_guard.h"
#include "iond/token.h"
#include "segstore/segment_area.h"

namespace stagio {
namespace iond {
namespace {

using json = nlohmann::json;

// A config file holds a few keys; anything much larger was named by mistake.
constexpr size_t kMaxConfigFileBytes = 1 << 20;
// The client's block-size range (stagio_block_size), so any client block size is possible here.
constexpr uint64_t kMinBlockSize = 512;
constexpr uint64_t kMaxBlockSize = uint64_t{1} << 30;

Status Expected(const std::string& what, const json& value) {
  return Status::InvalidArgument("expected " + what + ", got " +
                                 value.dump(-1, ' ', false, json::error_handler_t::replace));
}

// A whole decimal number, as the command line gives numbers.
bool UnsignedFromText(const std::string& text, uint64_t* number) {
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, *number);
  return !text.empty() && error == std::errc() && stop == end;
}

// A JSON whole number >= 0 (nlohmann keeps numbers built in code as signed), or text that
// `parse_text` accepts, as the command line gives every value.
bool WholeNumberFrom(const json& value, bool (*parse_text)(const std::string&, uint64_t*),
                     uint64_t* number) {
  if (value.is_number_unsigned()) {
    *number = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer()) {
    if (value.get<int64_t>() < 0) return false;
    *number = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return value.is_string() && parse_text(value.get<std::string>(), number);
}

Status SizeFrom(const json& value, uint64_t low, uint64_t high, uint64_t* bytes) {
  uint64_t parsed = 0;
  if (!WholeNumberFrom(value, ParseByteSize, &parsed) || parsed < low || parsed > high) {
    std::string range = "a size from " + std::to_string(low) + " to " + std::to_string(high) +
                        " bytes";
    if (high == UINT64_MAX) range = low == 0 ? "a size in bytes" : "a positive size in bytes";
    return Expected(range + " (a number, or text with a K/M/G suffix such as \"512M\")", value);
  }
  *bytes = parsed;
  return Status::OK();
}

Status CountFrom(const json& value, uint64_t low, uint64_t high, uint64_t* count) {
  uint64_t parsed = 0;
  if (!WholeNumberFrom(value, UnsignedFromText, &parsed) || parsed < low || parsed > high) {
    return Expected("a whole number from " + std::to_string(low) + " to " + std::to_string(high),
                    value);
  }
  *count = parsed;
  return Status::OK();
}

// A decimal number from `low` to `high`, from JSON or from text of digits and a point (strtod
// would take "inf", "nan", hex and leading blanks), after removing `suffix` if it ends the text.
Status DecimalFrom(const json& value, double low, double high, const std::string& what,
                   const char* suffix, double* number) {
  double parsed = -1;
  if (value.is_number()) {
    parsed = value.get<double>();
  } else if (value.is_string()) {
    std::string text = value.get<std::string>();
    const std::string end_text = suffix;
    if (!end_text.empty() && text.size() >= end_text.size() &&
        text.compare(text.size() - end_text.size(), end_text.size(), end_text) == 0) {
      text.resize(text.size() - end_text.size());
    }
    char* end = nullptr;
    const bool plain = !text.empty() && text.find_first_not_of("0123456789.") == std::string::npos;
    if (plain) parsed = std::strtod(text.c_str(), &end);
    if (!plain || end != text.c_str() + text.size()) parsed = -1;
  }
  if (!std::isfinite(parsed) || parsed < low || parsed > high) return Expected(what, value);
  *number = parsed;
  return Status::OK();
}

Status PercentFrom(const json& value, double* percent) {
  return DecimalFrom(value, 0, 100, "a percentage from 0 to 100", "%", percent);
}

// null means unset, as --print-config shows an unset path, so its output loads back.
Status PathFrom(const json& value, std::string* path) {
  if (value.is_null()) {
    path->clear();
    return Status::OK();
  }
  if (!value.is_string() || value.get<std::string>().empty()) return Expected("a path", value);
  *path = value.get<std::string>();
  return Status::OK();
}

Status AddressesFrom(const json& value, std::vector<net::Address>* addresses) {
  const json list = value.is_string() ? json::array({value}) : value;
  if (!list.is_array() || list.empty()) {
    return Expected("a list of addresses (host:port or unix:/path)", value);
  }
  std::vector<net::Address> parsed;
  for (const json& item : list) {
    if (!item.is_string()) return Expected("an address (host:port or unix:/path)", item);
    net::Address address;
    Status status = net::Address::Parse(item.get<std::string>(), &address);
    if (!status.ok()) return status;
    parsed.push_back(address);
  }
  *addresses = std::move(parsed);
  return Status::OK();
}

struct Rule {
  ConfigKey key;
  Status (*apply)(const json& value, IondConfig* config);
};

// The one list of settings: the command line, the config file and --print-config all follow it.
const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = {
      {{"listen", "ADDR",
        "Address to listen on: host:port (TCP) or unix:/path; repeat for several "
        "(default 127.0.0.1:7070)"},
       [](const json& v, IondConfig* c) { return AddressesFrom(v, &c->listen); }},
      {{"root", "DIR", "Directory whose files the daemon serves (required)"},
       [](const json& v, IondConfig* c) { return PathFrom(v, &c->root); }},
      {{"cache_size", "SIZE",
        "Cache capacity, bytes with K/M/G suffixes; at least the sum of the client caches it "
        "serves (default 512M)"},
       [](const json& v, IondConfig* c) { return SizeFrom(v, 1, UINT64_MAX, &c->cache_size); }},
      {{"block_size", "SIZE",
        "Cache block size, 512 to 1G; best equal to the clients' stagio_block_size "
        "(default 1M)"},
       [](const json& v, IondConfig* c) {
         return SizeFrom(v, kMinBlockSize, kMaxBlockSize, &c->block_size);
       }},
      {{"write_back_high", "PCT",
        "Dirty share of the cache, 0-100, at which write-back starts; 0 flushes continuously "
        "(default 0)"},
       [](const json& v, IondConfig* c) { return PercentFrom(v, &c->write_back_high); }},
      {{"write_back_low", "PCT",
        "Dirty share, 0-100 and at most the high mark, at which write-back stops (default 0)"},
       [](const json& v, IondConfig* c) { return PercentFrom(v, &c->write_back_low); }},
      {{"prefetch_blocks", "N",
        "After each read, prefetch up to this many next client blocks of the same aggregator "
        "(fewer while prefetched blocks go unused), 0-1024; 0 turns prefetching off (default 4)"},
       [](const json& v, IondConfig* c) { return CountFrom(v, 0, 1024, &c->prefetch_blocks); }},
      {{"io_threads", "N", "Prefetch reads in flight to storage at once, 1-64 (default 4)"},
       [](const json& v, IondConfig* c) { return CountFrom(v, 1, 64, &c->io_threads); }},
      {{"request_threads", "N",
        "Requests served at once over all connections, 1-256 (default 8)"},
       [](const json& v, IondConfig* c) { return CountFrom(v, 1, 256, &c->request_threads); }},
      {{"hello_timeout", "SEC",
        "Seconds a new connection has, from accept, to send its whole Hello (version and "
        "token) before it is closed, 0.1-3600; a peer sending a byte at a time is closed too "
        "(default 10)"},
       [](const json& v, IondConfig* c) {
         return DecimalFrom(v, 0.1, 3600, "a number of seconds from 0.1 to 3600", "s",
                            &c->hello_timeout);
       }},
      {{"hello_max_bytes", "SIZE",
        "Largest Hello payload, 512 to 1M; a Hello announcing more is refused before it is "
        "read; must hold the token and a client name (default 4K)"},
       [](const json& v, IondConfig* c) {
         return SizeFrom(v, 512, uint64_t{1} << 20, &c->hello_max_bytes);
       }},
      {{"max_unauthenticated", "N",
        "Connections that may wait for their Hello at once, 1-65536; when full, the oldest "
        "idle one is closed to make room (default 128)"},
       [](const json& v, IondConfig* c) {
         return CountFrom(v, 1, 65536, &c->max_unauthenticated);
       }},
      {{"max_connections", "N",
        "Clients served at once after Hello (two threads each), 1-65536; one more is refused "
        "with a reply saying so; waiting connections do not count (default 4096)"},
       [](const json& v, IondConfig* c) { return CountFrom(v, 1, 65536, &c->max_connections); }},
      {{"token_file", "FILE",
        "File holding the token clients must present (else STAGIO_IOND_TOKEN); required "
        "when a listener is reachable from other machines"},
       [](const json& v, IondConfig* c) { return PathFrom(v, &c->token_file); }},
      {{"ready_file", "FILE",
        "Once listening, write the bound addresses here, one per line (real ports for port 0)"},
       [](const json& v, IondConfig* c) { return PathFrom(v, &c->ready_file); }},
      {{"stats", "FILE", "At shutdown, write the daemon's counters as JSON here"},
       [](const json& v, IondConfig* c) { return PathFrom(v, &c->stats); }},
      {{"segstore", "DIR",
        "Keep grouped copies of data read together in segments here, on a fast local disk "
        "(a directory, or a raw partition's device); off when unset"},
       [](const json& v, IondConfig* c) { return PathFrom(v, &c->segstore); }},
      {{"segstore_size", "SIZE",
        "Disk space of the segment store, reserved at start (default 1G)"},
       [](const json& v, IondConfig* c) { return SizeFrom(v, 1, UINT64_MAX, &c->segstore_size); }},
      {{"segstore_segment_size", "SIZE",
        "Size of one segment, the unit grouped data is written and read in, 4K to 1G "
        "(default 16M)"},
       [](const json& v, IondConfig* c) {
         return SizeFrom(v, 4096, uint64_t{1} << 30, &c->segstore_segment_size);
       }},
      {{"segstore_cache", "SIZE",
        "Memory for whole segments read from the segment store, at least one segment "
        "(default 128M)"},
       [](const json& v, IondConfig* c) {
         return SizeFrom(v, 1, UINT64_MAX, &c->segstore_cache);
       }},
      {{"segstore_popularity_j", "N",
        "Extents are grouped when one followed the other at least j times ... (1-64, "
        "default 1)"},
       [](const json& v, IondConfig* c) {
         return CountFrom(v, 1, 64, &c->segstore_popularity_j);
       }},
      {{"segstore_popularity_k", "N",
        "... among its last k successors (1-64, at least j, default 4)"},
       [](const json& v, IondConfig* c) {
         return CountFrom(v, 1, 64, &c->segstore_popularity_k);
       }},
      {{"segstore_idle", "SEC",
        "Seconds without storage requests before grouping runs, 0.01-86400; it yields to "
        "the next request (default 5)"},
       [](const json& v, IondConfig* c) {
         return DecimalFrom(v, 0.01, 86400, "a number of seconds from 0.01 to 86400", "s",
                            &c->segstore_idle);
       }},
  };
  return rules;
}

std::string KnownKeys() {
  std::string keys;
  for (const Rule& rule : Rules()) keys += (keys.empty() ? "" : ", ") + std::string(rule.key.key);
  return keys;
}

// The checks that involve more than one setting, and the token.
Status CheckWhole(const ConfigSources& sources, IondConfig* config) {
  if (config->root.empty()) {
    return Status::InvalidArgument("no root directory: give --root DIR or \"root\" in the "
                                   "config file");
  }
  RootGuard guard;
  Status status = RootGuard::Create(config->root, &guard);
  if (!status.ok()) return Status::InvalidArgument("root: " + status.message());
  config->root = guard.root();
  if (config->write_back_low > config->write_back_high) {
    return Status::InvalidArgument("write_back_low (" + json(config->write_back_low).dump() +
                                   "%) is above write_back_high (" +
                                   json(config->write_back_high).dump() + "%)");
  }
  if (config->cache_size < config->block_size) {
    return Status::InvalidArgument("cache_size (" + std::to_string(config->cache_size) +
                                   " bytes) is smaller than one block (block_size " +
                                   std::to_string(config->block_size) + ")");
  }
  if (config->segstore_size / config->segstore_segment_size > segstore::SegmentArea::kMaxSlots) {
    return Status::InvalidArgument(
        "segstore_size (" + std::to_string(config->segstore_size) + " bytes) holds more than " +
        std::to_string(segstore::SegmentArea::kMaxSlots) + " segments of " +
        std::to_string(config->segstore_segment_size) +
        " bytes: give a larger segstore_segment_size");
  }
  if (config->segstore_cache < config->segstore_segment_size) {
    return Status::InvalidArgument(
        "segstore_cache (" + std::to_string(config->segstore_cache) +
        " bytes) is smaller than one segment (segstore_segment_size " +
        std::to_string(config->segstore_segment_size) +
        "): every read from a segment would read the whole segment from disk");
  }
  if (config->segstore_popularity_j > config->segstore_popularity_k) {
    return Status::InvalidArgument(
        "segstore_popularity_j (" + std::to_string(config->segstore_popularity_j) +
        ") is above segstore_popularity_k (" + std::to_string(config->segstore_popularity_k) +
        "): a successor cannot be seen more often than it is remembered");
  }
  if (!config->token_file.empty()) {
    status = ReadTokenFile(config->token_file, &config->token);
    if (!status.ok()) return Status::InvalidArgument("token_file: " + status.message());
  } else if (sources.env_token != nullptr) {
    // An empty variable counts as unset: job scripts often export variables they leave empty.
    config->token = StripTrailingNewline(sources.env_token);
  }
  const size_t largest_hello = LargestClientHello(config->token);
  if (config->hello_max_bytes < largest_hello) {
    return Status::InvalidArgument(
        "hello_max_bytes (" + std::to_string(config->hello_max_bytes) + " bytes) cannot hold a "
        "client's Hello with this token (up to " + std::to_string(largest_hello) + " bytes)");
  }
  return CheckTokenForListeners(*config);
}

}  // namespace

std::string OptionName(const std::string& key) {
  std::string option = "--" + key;
  for (char& c : option) c = c == '_' ? '-' : c;
  return option;
}

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> list;
    for (const Rule& rule : Rules()) list.push_back(rule.key);
    return list;
  }();
  return keys;
}

Status ResolveConfig(const ConfigSources& sources, IondConfig* config) {
  *config = IondConfig();
  net::Address loopback;
  loopback.host = "127.0.0.1";
  loopback.port = kDefaultPort;
  config->listen = {loopback};
  const std::string file_label = "config file " + sources.file_name;
  if (!sources.file.is_object()) {
    return Status::InvalidArgument(file_label + ": expected a JSON object of settings");
  }
  for (auto it = sources.file.begin(); it != sources.file.end(); ++it) {
    bool known = false;
    for (const Rule& rule : Rules()) known |= it.key() == rule.key.key;
    if (!known) {
      return Status::InvalidArgument(file_label + ": unknown key '" + it.key() +
                                     "' (known keys: " + KnownKeys() + ")");
    }
  }
  for (const Rule& rule : Rules()) {
    const json* value = nullptr;
    std::string origin;
    if (sources.command_line.contains(rule.key.key)) {
      value = &sources.command_line[rule.key.key];
      origin = OptionName(rule.key.key);
    } else if (sources.file.contains(rule.key.key)) {
      value = &sources.file[rule.key.key];
      origin = std::string(rule.key.key) + " in " + file_label;
    }
    if (value == nullptr) continue;
    Status status = rule.apply(*value, config);
    if (!status.ok()) return Status::InvalidArgument(origin + ": " + status.message());
  }
  return CheckWhole(sources, config);
}

Status ReadConfigFile(const std::string& path, nlohmann::json* settings) {
  std::string text;
  Status status = ReadSmallFile(path, kMaxConfigFileBytes, &text);
  if (!status.ok()) return Status::InvalidArgument("config file " + status.message());
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false,
                            /*ignore_comments=*/true);
  if (parsed.is_discarded()) {
    return Status::InvalidArgument("config file " + path + ": not valid JSON");
  }
  *settings = std::move(parsed);
  return Status::OK();
}

Status CheckTokenForListeners(const IondConfig& config) {
  if (!config.token.empty()) return Status::OK();
  for (const net::Address& address : config.listen) {
    if (!net::IsLocalOnly(address)) {
      return Status::InvalidArgument(
          "listener " + address.ToString() + " can be reached from other machines, and no "
          "token is set: give --token-file FILE or set " + std::string(kTokenVariable) +
          " (or listen on loopback or a unix: socket only)");
    }
  }
  return Status::OK();
}

json ConfigToJson(const IondConfig& config) {
  json listen = json::array();
  for (const net::Address& address : config.listen) listen.push_back(address.ToString());
  const auto optional_path = [](const std::string& path) {
    return path.empty() ? json() : json(path);
  };
  return {
      {"listen", listen},
      {"root", config.root},
      {"cache_size", config.cache_size},
      {"block_size", config.block_size},
      {"write_back_high", config.write_back_high},
      {"write_back_low", config.write_back_low},
      {"prefetch_blocks", config.prefetch_blocks},
      {"io_threads", config.io_threads},
      {"request_threads", config.request_threads},
      {"hello_timeout", config.hello_timeout},
      {"hello_max_bytes", config.hello_max_bytes},
      {"max_unauthenticated", config.max_unauthenticated},
      {"max_connections", config.max_connections},
      {"token", config.token.empty() ? "unset" : "set"},
      {"token_file", optional_path(config.token_file)},
      {"ready_file", optional_path(config.ready_file)},
      {"stats", optional_path(config.stats)},
      {"segstore", optional_path(config.segstore)},
      {"segstore_size", config.segstore_size},
      {"segstore_segment_size", config.segstore_segment_size},
      {"segstore_cache", config.segstore_cache},
      {"segstore_popularity_j", config.segstore_popularity_j},
      {"segstore_popularity_k", config.segstore_popularity_k},
      {"segstore_idle", config.segstore_idle},
  };
}

}  // namespace iond
}  // namespace stagio
