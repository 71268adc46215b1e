// Configuration: what stagio is told to do, and where it is told.
//
// Every setting has a hint name `stagio_x` and an environment twin `STAGIO_X`. Layers, lowest
// first; a later layer wins:
//   1. built-in defaults (seed 004 for the write-back water marks),
//   2. the hints file named by STAGIO_HINTS (lines "stagio_x value"; '#' starts a comment),
//   3. the environment,
//   4. MPI_Info hints given at open, set_view or set_info.
// A malformed or unknown value never aborts: the setting keeps the value of the layer below,
// and a warning names the key, the bad value and the value used.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stagio {

struct Settings {
  bool disable = false;                  // STAGIO_DISABLE: every call becomes plain PMPI
  bool cache_enabled = true;             // stagio_cache=enable|disable (per file)
  uint64_t block_size = 1 << 20;         // stagio_block_size, bytes, accepts K/M/G suffixes
  uint64_t cache_size = 64ull << 20;     // stagio_cache_size, bytes per process
  double write_back_high = 6.25;         // stagio_wb_high, percent of the cache that is dirty
  double write_back_low = 3.125;         // stagio_wb_low, percent; must not exceed the high mark
  double write_back_quiet_ms = 2;        // stagio_wb_quiet: flush all after this long without writes
  std::string driver = "posix";          // stagio_driver=posix|fault (fault wraps posix; tests)
  std::string iond;                      // stagio_iond: I/O-node daemons, "host:port,unix:/path"
  std::string iond_token;                // stagio_iond_token: the daemons' shared token
  std::string iond_token_file;           // stagio_iond_token_file: a file holding it
  double iond_timeout = 60;              // stagio_iond_timeout: seconds a daemon may keep
                                         // silent while a request waits, then it is lost
  std::string prefetch = "auto";         // stagio_prefetch=none|individual|view|collective|auto
  bool node_cache = true;                // stagio_node_cache=enable|disable: one cache per node
  uint64_t node_size = 0;                // stagio_node_size: pretend nodes of N ranks (tests)
  bool collective_cache = true;          // stagio_collective_cache=enable|disable
  std::string aggregators = "auto";      // stagio_aggregators: auto (one per node), N, or r0,r1,..
  uint64_t cb_buffer_size = 16ull << 20; // stagio_cb_buffer_size: two-phase bytes per aggregator
                                         // and exchange round
  uint64_t history = 8;                  // stagio_history: accesses the predictors look at
  uint64_t prefetch_max = 16ull << 20;   // stagio_prefetch_max: bound on the prefetch depth
  uint64_t prefetch_threads = 4;         // stagio_prefetch_threads: prefetches in flight at once
  std::string direct = "auto";           // stagio_direct=auto|always|never|alternate
  std::string preexec = "ppis";          // stagio_preexec=off|pp|ppis: pre-execution helpers
  std::string stats_path;                // stagio_stats: JSON written at MPI_Finalize if set
  bool summary = false;                  // stagio_summary: rank 0 prints a summary at finalize
};

// Where a setting takes effect, which decides what an MPI_Info hint can change and what
// MPI_File_get_info reports.
enum class SettingScope {
  kFile,     // per file: hints at open, set_view and set_info change it for that file
  kProcess,  // one value per process (the cache, write-back, the driver): a hint changes it
             // for every file of the process
  kStartup,  // read once, at MPI_Init (environment, hints file): a hint is ignored, with a
             // warning, since the part of stagio it configures already runs
};
SettingScope ScopeOfSetting(const std::string& key);

// Reads an environment variable; injectable so tests need not touch the real environment.
using EnvLookup = std::function<const char*(const char* name)>;
EnvLookup ProcessEnvironment();

// Applies one `stagio_x value` pair to `settings`. On an unknown key or a malformed value the
// setting is left as it was, false is returned and *warning says what was wrong and which
// value stays in force. `source` names where the pair came from ("environment", "hints file
// /path line 3", "MPI_Info") for the warning.
bool ApplySetting(const std::string& key, const std::string& value, const std::string& source,
                  Settings* settings, std::string* warning);

// Layers 1-3: defaults, hints file, environment. Warnings are appended to *warnings.
// Variables named STAGIO_* that stagio does not know are reported too; their names come from
// the process environment (see StagioEnvironmentNames), whatever `env` is.
Settings LoadProcessSettings(const EnvLookup& env, std::vector<std::string>* warnings);
// The same, with the names of the STAGIO_* variables that are set given by the caller (tests).
Settings LoadProcessSettings(const EnvLookup& env, const std::vector<std::string>& env_names,
                             std::vector<std::string>* warnings);
// The names of the process environment's variables that start with "STAGIO_".
std::vector<std::string> StagioEnvironmentNames();

// Layer 4: applies every `stagio_*` key of `info` (MPI_INFO_NULL is allowed) on top of `base`.
// Keys without the stagio_ prefix are MPI's and ROMIO's business and are ignored here; so are
// startup settings (SettingScope::kStartup), with a warning.
Settings ApplyInfo(const Settings& base, MPI_Info info, std::vector<std::string>* warnings);

// Every hint key stagio knows, for get_info and for documentation.
const std::vector<std::string>& KnownHintKeys();
// The value of `key` in `settings`, formatted as it would be parsed back ("" for an unknown key).
std::string FormatSetting(const Settings& settings, const std::string& key);
// One line saying what `key` does and which values it takes ("" for an unknown key).
std::string DescribeSetting(const std::string& key);

// stagio_aggregators, parsed: "auto" (one per node), a count ("4"), or distinct ranks
// ("0,2,5"; a trailing comma makes a list of one: "3,").
struct AggregatorSpec {
  bool automatic = true;
  int count = 0;           // > 0 when a count was given
  std::vector<int> ranks;  // non-empty when ranks were listed
};
bool ParseAggregatorSpec(const std::string& text, AggregatorSpec* spec);
// The list of `ranks` as ParseAggregatorSpec reads it back ("0,2,5"; "3," for one rank).
std::string FormatAggregatorRanks(const std::vector<int>& ranks);

// Parses "4096", "64K", "1M", "2G" (powers of 1024; case-insensitive) into bytes.
bool ParseByteSize(const std::string& text, uint64_t* bytes);

}  // namespace stagio
