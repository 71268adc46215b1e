#include "common/config.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "common/small_file.h"
#include "common/text.h"

extern char** environ;

namespace stagio {
namespace {

constexpr char kHintPrefix[] = "stagio_";
constexpr char kEnvPrefix[] = "STAGIO_";
// Names the hints file; it is not a setting itself, so it has no hint twin.
constexpr char kHintsFileVariable[] = "STAGIO_HINTS";
// A hints file holds a few dozen lines; anything much larger was named by mistake.
constexpr size_t kMaxHintsFileBytes = 1 << 20;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = kKiB * 1024;
constexpr uint64_t kGiB = kMiB * 1024;
// Smaller blocks would make the cache's per-block bookkeeping cost more than the I/O it saves;
// larger ones could not be allocated on many nodes.
constexpr uint64_t kMinBlockSize = 512;
constexpr uint64_t kMaxBlockSize = kGiB;


std::string ToUpper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// stagio_block_size -> STAGIO_BLOCK_SIZE.
std::string EnvNameForKey(const std::string& key) {
  return kEnvPrefix + ToUpper(key.substr(std::strlen(kHintPrefix)));
}

// ---- Value parsers. Each writes its output only on success, so a bad value keeps the old one.

bool ParseBool(const std::string& text, bool* value) {
  static const char* const kTrueWords[] = {"1", "true", "yes", "on", "enable"};
  static const char* const kFalseWords[] = {"0", "false", "no", "off", "disable"};
  const std::string word = ToLower(text);
  for (const char* candidate : kTrueWords) {
    if (word == candidate) {
      *value = true;
      return true;
    }
  }
  for (const char* candidate : kFalseWords) {
    if (word == candidate) {
      *value = false;
      return true;
    }
  }
  return false;
}

// A plain decimal number ("6.25", "50", ".5") in 0..100 with an optional trailing '%'. Signs,
// exponents, "nan" and "inf" are refused by checking the characters before converting.
bool ParsePercent(const std::string& text, double* percent) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  int digits = 0;
  int points = 0;
  for (char c : number) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      ++digits;
    } else if (c == '.') {
      ++points;
    } else {
      return false;
    }
  }
  if (digits == 0 || points > 1) return false;
  double parsed = 0;
  const char* end = number.data() + number.size();
  // from_chars ignores the locale: an application that set a German locale still parses "6.25".
  std::from_chars_result result =
      std::from_chars(number.data(), end, parsed, std::chars_format::fixed);
  if (result.ec != std::errc() || result.ptr != end) return false;
  if (parsed < 0 || parsed > 100) return false;
  *percent = parsed;
  return true;
}

// A plain decimal number (no suffix, no sign for unsigned types) within [low, high].
template <typename Number>
bool ParseNumberIn(const std::string& text, Number low, Number high, Number* value) {
  Number parsed{};
  const std::string trimmed = Trim(text);
  const char* end = trimmed.data() + trimmed.size();
  const auto result = std::from_chars(trimmed.data(), end, parsed);
  if (result.ec != std::errc() || result.ptr != end || !(parsed >= low) || parsed > high) {
    return false;
  }
  *value = parsed;
  return true;
}

bool ParsePrefetchMode(const std::string& text, std::string* mode) {
  const std::string name = ToLower(text);
  if (name != "none" && name != "individual" && name != "view" && name != "collective" &&
      name != "auto") {
    return false;
  }
  *mode = name;
  return true;
}

bool ParseDirectPathMode(const std::string& text, std::string* mode) {
  const std::string name = ToLower(text);
  if (name != "auto" && name != "always" && name != "never" && name != "alternate") return false;
  *mode = name;
  return true;
}

bool ParsePreexecMode(const std::string& text, std::string* mode) {
  const std::string name = ToLower(text);
  if (name != "off" && name != "pp" && name != "ppis") return false;
  *mode = name;
  return true;
}

// Validated here, kept as text: whether the count or the ranks fit the communicator is known
// only at open, which parses it again (ParseAggregatorSpec).
bool ParseAggregators(const std::string& text, std::string* aggregators) {
  const std::string spec = ToLower(Trim(text));
  if (spec == "auto") {
    *aggregators = spec;
    return true;
  }
  AggregatorSpec parsed;
  if (!ParseAggregatorSpec(spec, &parsed)) return false;
  *aggregators = spec;
  return true;
}

bool ParseDriverName(const std::string& text, std::string* driver) {
  const std::string name = ToLower(text);
  if (name != "posix" && name != "fault") return false;
  *driver = name;
  return true;
}

// ---- Formatters: the inverse of the parsers, so FormatSetting output parses back unchanged.

std::string FormatBool(bool value) { return value ? "true" : "false"; }

std::string FormatByteSize(uint64_t bytes) {
  if (bytes != 0 && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + "G";
  if (bytes != 0 && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "M";
  if (bytes != 0 && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + "K";
  return std::to_string(bytes);
}

// The shortest fixed-notation text that reads back as the same double ("6.25", not "6.250000").
std::string FormatDecimal(double percent) {
  char buffer[400];  // fixed notation of a value up to 100 with every digit a double can carry
  std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), percent, std::chars_format::fixed);
  if (result.ec != std::errc()) return std::to_string(percent);
  return std::string(buffer, result.ptr);
}

// ---- The settings table: one row per hint key. Everything that enumerates settings (parsing,
// formatting, the environment layer, get_info) walks this table, so adding a setting is one row.

struct SettingRow {
  const char* key;
  // Parses `text` into `settings`; returns false and leaves `settings` unchanged if malformed.
  bool (*parse)(const std::string& text, Settings* settings);
  std::string (*format)(const Settings& settings);
  const char* description;
  SettingScope scope = SettingScope::kFile;
};

const SettingRow kSettingRows[] = {
    {"stagio_disable",
     [](const std::string& text, Settings* s) { return ParseBool(text, &s->disable); },
     [](const Settings& s) { return FormatBool(s.disable); },
     "bool: make every MPI-IO call plain PMPI (process-wide)",
     SettingScope::kStartup},
    {"stagio_cache",
     [](const std::string& text, Settings* s) { return ParseBool(text, &s->cache_enabled); },
     [](const Settings& s) { return std::string(s.cache_enabled ? "enable" : "disable"); },
     "enable|disable: cache this file's blocks"},
    {"stagio_block_size",
     [](const std::string& text, Settings* s) {
       uint64_t bytes = 0;
       if (!ParseByteSize(text, &bytes) || bytes < kMinBlockSize || bytes > kMaxBlockSize) {
         return false;
       }
       s->block_size = bytes;
       return true;
     },
     [](const Settings& s) { return FormatByteSize(s.block_size); },
     "bytes (K/M/G suffixes), 512 to 1G: cache block size"},
    {"stagio_cache_size",
     [](const std::string& text, Settings* s) { return ParseByteSize(text, &s->cache_size); },
     [](const Settings& s) { return FormatByteSize(s.cache_size); },
     "bytes (K/M/G suffixes): cache capacity per process; 0 keeps only what a request pins",
     SettingScope::kProcess},
    {"stagio_wb_high",
     [](const std::string& text, Settings* s) { return ParsePercent(text, &s->write_back_high); },
     [](const Settings& s) { return FormatDecimal(s.write_back_high); },
     "percent 0-100: dirty share of the cache at which write-back starts",
     SettingScope::kProcess},
    {"stagio_wb_low",
     [](const std::string& text, Settings* s) { return ParsePercent(text, &s->write_back_low); },
     [](const Settings& s) { return FormatDecimal(s.write_back_low); },
     "percent 0-100, at most stagio_wb_high: dirty share at which write-back stops",
     SettingScope::kProcess},
    {"stagio_wb_quiet",
     [](const std::string& text, Settings* s) {
       return ParseNumberIn(text, 0.0, 3.6e6, &s->write_back_quiet_ms);
     },
     [](const Settings& s) { return FormatDecimal(s.write_back_quiet_ms); },
     "milliseconds, 0 to 3600000: write back everything dirty once no write has come for this "
     "long; 0: only the water marks",
     SettingScope::kProcess},
    {"stagio_driver",
     [](const std::string& text, Settings* s) { return ParseDriverName(text, &s->driver); },
     [](const Settings& s) { return s.driver; },
     "posix|fault: storage driver (fault wraps posix and is for tests)",
     SettingScope::kProcess},
    {"stagio_iond",
     [](const std::string& text, Settings* s) {
       s->iond = Trim(text);
       return true;
     },
     [](const Settings& s) { return s.iond; },
     "comma-separated host:port or unix:/path: the stagio-iond daemons to stage data through "
     "(process-wide, read at MPI_Init); empty: no I/O-node tier",
     SettingScope::kStartup},
    {"stagio_iond_token",
     [](const std::string& text, Settings* s) {
       s->iond_token = text;
       return true;
     },
     // A secret: get_info and summaries say only whether it is set.
     [](const Settings& s) { return std::string(s.iond_token.empty() ? "" : "(set)"); },
     "text: the token the stagio-iond daemons require (process-wide, read at MPI_Init)",
     SettingScope::kStartup},
    {"stagio_iond_token_file",
     [](const std::string& text, Settings* s) {
       s->iond_token_file = text;
       return true;
     },
     [](const Settings& s) { return s.iond_token_file; },
     "path: a file holding the stagio-iond token (used when stagio_iond_token is not set)",
     SettingScope::kStartup},
    {"stagio_iond_timeout",
     [](const std::string& text, Settings* s) {
       return ParseNumberIn(text, 0.1, 86400.0, &s->iond_timeout);
     },
     [](const Settings& s) { return FormatDecimal(s.iond_timeout); },
     "seconds, 0.1 to 86400: how long a request to a stagio-iond daemon may wait without a word "
     "from it; then the daemon counts as lost and its files are read and written directly "
     "(process-wide, read at MPI_Init)",
     SettingScope::kStartup},
    {"stagio_prefetch",
     [](const std::string& text, Settings* s) { return ParsePrefetchMode(text, &s->prefetch); },
     [](const Settings& s) { return s.prefetch; },
     "none|individual|view|collective|auto: prefetch from each rank's access patterns "
     "(individual), from the file view (view), from every rank's collective reads at the "
     "aggregators (collective), or auto: collective reads collectively, other reads from the "
     "view when it is non-contiguous and from patterns otherwise"},
    {"stagio_node_cache",
     [](const std::string& text, Settings* s) { return ParseBool(text, &s->node_cache); },
     [](const Settings& s) { return std::string(s.node_cache ? "enable" : "disable"); },
     "enable|disable: the ranks of a node that open a file together share one cache of its "
     "blocks in shared memory, as large as their stagio_cache_size together; a hit is a copy "
     "on the reading rank and a miss is fetched by the rank that needs it"},
    {"stagio_node_size",
     [](const std::string& text, Settings* s) {
       return ParseNumberIn<uint64_t>(text, 0, 1u << 20, &s->node_size);
     },
     [](const Settings& s) { return std::to_string(s.node_size); },
     "0 (the real nodes) or N: cut each node's ranks into pretend nodes of N consecutive ranks, "
     "each with its own node cache (for tests and benchmarks of several nodes on one machine; "
     "read at MPI_Init)",
     SettingScope::kStartup},
    {"stagio_collective_cache",
     [](const std::string& text, Settings* s) { return ParseBool(text, &s->collective_cache); },
     [](const Settings& s) { return std::string(s.collective_cache ? "enable" : "disable"); },
     "enable|disable: each block of a file opened by several ranks lives in one aggregator's "
     "cache, and collective calls use two-phase I/O (needs MPI_THREAD_MULTIPLE)"},
    {"stagio_aggregators",
     [](const std::string& text, Settings* s) { return ParseAggregators(text, &s->aggregators); },
     [](const Settings& s) { return s.aggregators; },
     "auto (one per node), a count (\"4\"), or a comma-separated list of ranks (\"0,2,5\"; "
     "\"3,\" for rank 3 alone): the aggregators that own cache blocks and serve collective I/O"},
    {"stagio_cb_buffer_size",
     [](const std::string& text, Settings* s) {
       uint64_t bytes = 0;
       if (!ParseByteSize(text, &bytes) || bytes < kMinBlockSize || bytes > kGiB) return false;
       s->cb_buffer_size = bytes;
       return true;
     },
     [](const Settings& s) { return FormatByteSize(s.cb_buffer_size); },
     "bytes (K/M/G suffixes), 512 to 1G: file bytes each aggregator serves per exchange round "
     "of a collective call"},
    {"stagio_history",
     [](const std::string& text, Settings* s) {
       return ParseNumberIn<uint64_t>(text, 2, 1024, &s->history);
     },
     [](const Settings& s) { return std::to_string(s.history); },
     "2 to 1024: reads in the history window the pattern predictors look at"},
    {"stagio_prefetch_max",
     [](const std::string& text, Settings* s) { return ParseByteSize(text, &s->prefetch_max); },
     [](const Settings& s) { return FormatByteSize(s.prefetch_max); },
     "bytes (K/M/G suffixes): the most a file's prefetches run ahead of its reads"},
    {"stagio_prefetch_threads",
     [](const std::string& text, Settings* s) {
       return ParseNumberIn<uint64_t>(text, 1, 64, &s->prefetch_threads);
     },
     [](const Settings& s) { return std::to_string(s.prefetch_threads); },
     "1 to 64: prefetches a process keeps in flight at once (process-wide, read at MPI_Init)",
     SettingScope::kStartup},
    {"stagio_direct",
     [](const std::string& text, Settings* s) { return ParseDirectPathMode(text, &s->direct); },
     [](const Settings& s) { return s.direct; },
     "auto|always|never|alternate: move a call's bytes straight between the application and "
     "storage, past the cache (auto: when the call is a quarter of the cache or more, when "
     "storage moved data at 1 GB/s or more per request, or for a write of a block or more when "
     "the program leaves no time between calls to write it back in; alternate: every other "
     "call, for tests)"},
    {"stagio_preexec",
     [](const std::string& text, Settings* s) { return ParsePreexecMode(text, &s->preexec); },
     [](const Settings& s) { return s.preexec; },
     "off|pp|ppis: pre-execution helper threads (stagio_preexec_start) do not run (off), "
     "fetch whenever they can (pp), or start no storage request while the main thread is "
     "inside an MPI-IO call (ppis)"},
    {"stagio_stats",
     [](const std::string& text, Settings* s) {
       s->stats_path = text;
       return true;
     },
     [](const Settings& s) { return s.stats_path; },
     "path: write job statistics as JSON there at MPI_Finalize; empty: do not",
     SettingScope::kStartup},
    {"stagio_summary",
     [](const std::string& text, Settings* s) { return ParseBool(text, &s->summary); },
     [](const Settings& s) { return FormatBool(s.summary); },
     "bool: rank 0 prints a short summary at MPI_Finalize",
     SettingScope::kStartup},
};

const SettingRow* FindRow(const std::string& key) {
  for (const SettingRow& row : kSettingRows) {
    if (key == row.key) return &row;
  }
  return nullptr;
}

void ApplyAndCollect(const std::string& key, const std::string& value, const std::string& source,
                     Settings* settings, std::vector<std::string>* warnings) {
  std::string warning;
  if (!ApplySetting(key, value, source, settings, &warning)) warnings->push_back(warning);
}

// The water marks are separate settings that may come from different layers, so their order
// can only be checked once all layers are in.
void ClampWriteBackMarks(Settings* settings, std::vector<std::string>* warnings) {
  if (settings->write_back_low <= settings->write_back_high) return;
  warnings->push_back("stagio_wb_low " + FormatDecimal(settings->write_back_low) +
                      " exceeds stagio_wb_high " + FormatDecimal(settings->write_back_high) +
                      "; using " + FormatDecimal(settings->write_back_high) + " for both");
  settings->write_back_low = settings->write_back_high;
}

// One line of a hints file: "stagio_x value", '#' starts a comment, blank lines are fine.
void ApplyHintsLine(const std::string& path, int line_number, std::string line, Settings* settings,
                    std::vector<std::string>* warnings) {
  const size_t comment = line.find('#');
  if (comment != std::string::npos) line.erase(comment);
  line = Trim(line);
  if (line.empty()) return;
  const std::string where = "hints file " + path + " line " + std::to_string(line_number);
  size_t key_end = 0;
  while (key_end < line.size() && !std::isspace(static_cast<unsigned char>(line[key_end]))) {
    ++key_end;
  }
  const std::string key = line.substr(0, key_end);
  const std::string value = Trim(line.substr(key_end));
  if (value.empty()) {
    warnings->push_back(where + ": expected 'stagio_<name> <value>', got '" + line + "'; ignored");
    return;
  }
  if (!StartsWith(key, kHintPrefix)) {
    warnings->push_back(where + ": '" + key + "' is not a stagio setting; ignored");
    return;
  }
  ApplyAndCollect(key, value, where, settings, warnings);
}

void ApplyHintsFile(const std::string& path, Settings* settings,
                    std::vector<std::string>* warnings) {
  std::string contents;
  const Status read = ReadSmallFile(path, kMaxHintsFileBytes, &contents);
  if (!read.ok()) {
    warnings->push_back("cannot read the hints file (from " + std::string(kHintsFileVariable) +
                        "): " + read.message() + "; ignored");
    return;
  }
  int line_number = 0;
  size_t start = 0;
  while (start < contents.size()) {
    size_t end = contents.find('\n', start);
    if (end == std::string::npos) end = contents.size();
    ApplyHintsLine(path, ++line_number, contents.substr(start, end - start), settings, warnings);
    start = end + 1;
  }
}

bool IsKnownEnvName(const std::string& name) {
  if (name == kHintsFileVariable) return true;
  for (const SettingRow& row : kSettingRows) {
    if (name == EnvNameForKey(row.key)) return true;
  }
  return false;
}

void ApplyEnvironment(const EnvLookup& env, const std::vector<std::string>& env_names,
                      Settings* settings, std::vector<std::string>* warnings) {
  for (const SettingRow& row : kSettingRows) {
    const std::string name = EnvNameForKey(row.key);
    const char* value = env(name.c_str());
    if (value != nullptr) ApplyAndCollect(row.key, value, "environment " + name, settings, warnings);
  }
  // A misspelt variable (STAGIO_BLOCKSIZE) would otherwise be silently without effect.
  // STAGIO_EMU_* belong to the storage emulator (tools/emulator), which runs under stagio in
  // benchmarks.
  for (const std::string& name : env_names) {
    if (StartsWith(name, kEnvPrefix) && !StartsWith(name, "STAGIO_EMU_") &&
        !IsKnownEnvName(name)) {
      warnings->push_back("unknown environment variable '" + name + "'; ignored");
    }
  }
}

// The value of `key` in `info`, or false if it is absent or cannot be read.
bool GetInfoValue(MPI_Info info, const char* key, std::string* value) {
  int flag = 0;
#if MPI_VERSION >= 4
  // MPI 4 reports the length including the terminating NUL when asked with buflen 0.
  int length = 0;
  char probe = '\0';
  if (PMPI_Info_get_string(info, key, &length, &probe, &flag) != MPI_SUCCESS || !flag) {
    return false;
  }
  std::string buffer(static_cast<size_t>(length) + 1, '\0');
  if (PMPI_Info_get_string(info, key, &length, buffer.data(), &flag) != MPI_SUCCESS || !flag) {
    return false;
  }
#else
  int length = 0;
  if (PMPI_Info_get_valuelen(info, key, &length, &flag) != MPI_SUCCESS || !flag) return false;
  std::string buffer(static_cast<size_t>(length) + 1, '\0');
  if (PMPI_Info_get(info, key, length, buffer.data(), &flag) != MPI_SUCCESS || !flag) {
    return false;
  }
#endif
  buffer.resize(std::strlen(buffer.c_str()));
  *value = buffer;
  return true;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

bool ApplySetting(const std::string& key, const std::string& value, const std::string& source,
                  Settings* settings, std::string* warning) {
  std::string ignored;
  if (warning == nullptr) warning = &ignored;
  const SettingRow* row = FindRow(key);
  if (row == nullptr) {
    *warning = "unknown setting '" + key + "' (from " + source + "); ignored";
    return false;
  }
  if (!row->parse(Trim(value), settings)) {
    *warning = "invalid value '" + value + "' for " + key + " (from " + source + "); using " +
               row->format(*settings);
    return false;
  }
  return true;
}

std::vector<std::string> StagioEnvironmentNames() {
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string variable(*entry);
    if (!StartsWith(variable, kEnvPrefix)) continue;
    names.push_back(variable.substr(0, variable.find('=')));
  }
  return names;
}

Settings LoadProcessSettings(const EnvLookup& env, std::vector<std::string>* warnings) {
  return LoadProcessSettings(env, StagioEnvironmentNames(), warnings);
}

Settings LoadProcessSettings(const EnvLookup& env, const std::vector<std::string>& env_names,
                             std::vector<std::string>* warnings) {
  std::vector<std::string> ignored;
  if (warnings == nullptr) warnings = &ignored;
  Settings settings;
  const char* hints_path = env(kHintsFileVariable);
  if (hints_path != nullptr && hints_path[0] != '\0') {
    ApplyHintsFile(hints_path, &settings, warnings);
  }
  ApplyEnvironment(env, env_names, &settings, warnings);
  ClampWriteBackMarks(&settings, warnings);
  return settings;
}

Settings ApplyInfo(const Settings& base, MPI_Info info, std::vector<std::string>* warnings) {
  std::vector<std::string> ignored;
  if (warnings == nullptr) warnings = &ignored;
  Settings settings = base;
  if (info == MPI_INFO_NULL) return settings;
  int key_count = 0;
  if (PMPI_Info_get_nkeys(info, &key_count) != MPI_SUCCESS) return settings;
  for (int i = 0; i < key_count; ++i) {
    char key[MPI_MAX_INFO_KEY + 1] = {};
    if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS) continue;
    if (!StartsWith(key, kHintPrefix)) continue;  // MPI's and ROMIO's hints
    if (FindRow(key) != nullptr && ScopeOfSetting(key) == SettingScope::kStartup) {
      // The value in force, as MPI_File_get_info reported it, is no request for a change: a
      // program that hands back the hints it got deserves no warning.
      std::string value;
      if (GetInfoValue(info, key, &value) && value == FormatSetting(base, key)) continue;
      warnings->push_back(std::string(key) + " is read once, at MPI_Init, from the environment "
                          "or the hints file; the value given in MPI_Info is ignored");
      continue;
    }
    std::string value;
    if (!GetInfoValue(info, key, &value)) continue;
    ApplyAndCollect(key, value, "MPI_Info", &settings, warnings);
  }
  ClampWriteBackMarks(&settings, warnings);
  return settings;
}

const std::vector<std::string>& KnownHintKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all;
    for (const SettingRow& row : kSettingRows) all.push_back(row.key);
    return all;
  }();
  return keys;
}

std::string FormatSetting(const Settings& settings, const std::string& key) {
  const SettingRow* row = FindRow(key);
  return row == nullptr ? std::string() : row->format(settings);
}

SettingScope ScopeOfSetting(const std::string& key) {
  const SettingRow* row = FindRow(key);
  return row == nullptr ? SettingScope::kFile : row->scope;
}

std::string FormatAggregatorRanks(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ",") + std::to_string(rank);
  return ranks.size() == 1 ? text + "," : text;
}

std::string DescribeSetting(const std::string& key) {
  const SettingRow* row = FindRow(key);
  return row == nullptr ? std::string() : row->description;
}

bool ParseAggregatorSpec(const std::string& text, AggregatorSpec* spec) {
  std::string rest = ToLower(Trim(text));
  AggregatorSpec parsed;
  if (rest == "auto") {
    *spec = parsed;
    return true;
  }
  parsed.automatic = false;
  // A single number is a count; a list (a trailing comma makes one of a single rank) names ranks.
  const bool list = rest.find(',') != std::string::npos;
  if (list && rest.back() == ',') rest.pop_back();
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    int number = 0;
    if (!ParseNumberIn(rest.substr(start, comma - start), 0, std::numeric_limits<int>::max(),
                       &number)) {
      return false;
    }
    for (int seen : parsed.ranks) {
      if (seen == number) return false;
    }
    parsed.ranks.push_back(number);
    start = comma + 1;
  }
  if (!list) {
    parsed.count = parsed.ranks.front();
    parsed.ranks.clear();
    if (parsed.count < 1) return false;
  }
  *spec = std::move(parsed);
  return true;
}

bool ParseByteSize(const std::string& text, uint64_t* bytes) {
  size_t position = 0;
  uint64_t number = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  while (position < text.size() && std::isdigit(static_cast<unsigned char>(text[position]))) {
    const uint64_t digit = static_cast<uint64_t>(text[position] - '0');
    if (number > (kMax - digit) / 10) return false;  // overflow
    number = number * 10 + digit;
    ++position;
  }
  if (position == 0) return false;  // empty, signed or not a number at all
  std::string suffix = ToLower(text.substr(position));
  uint64_t multiplier = 1;
  if (!suffix.empty() && (suffix[0] == 'k' || suffix[0] == 'm' || suffix[0] == 'g')) {
    multiplier = suffix[0] == 'k' ? kKiB : suffix[0] == 'm' ? kMiB : kGiB;
    suffix.erase(0, 1);
    if (suffix == "ib") suffix.clear();
  }
  if (suffix == "b") suffix.clear();  // "64KB", "512B"
  if (!suffix.empty()) return false;
  if (number > kMax / multiplier) return false;
  *bytes = number * multiplier;
  return true;
}

}  // namespace stagio
