#include "common/stats.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "common/log.h"

namespace stagio {
namespace {

constexpr char kStagioVersion[] = STAGIO_VERSION_STRING;

using json = nlohmann::json;

// Adds `addend` into `*sum`: numbers add, objects merge key by key (recursively), and anything
// else present only in `addend` is copied. Used for every "total" so that totals keep the shape
// of what they sum, whatever counters and call kinds appear.
void MergeJsonInto(json* sum, const json& addend) {
  if (sum->is_null()) {
    *sum = addend;
  } else if (sum->is_object() && addend.is_object()) {
    for (auto it = addend.begin(); it != addend.end(); ++it) MergeJsonInto(&(*sum)[it.key()], *it);
  } else if (sum->is_number_unsigned() && addend.is_number_unsigned()) {
    *sum = sum->get<uint64_t>() + addend.get<uint64_t>();
  } else if (sum->is_number() && addend.is_number()) {
    *sum = sum->get<double>() + addend.get<double>();
  }
  // Anything else (strings, mismatched types) keeps the first value: there is nothing to sum.
}

// Paths are bytes, not necessarily UTF-8; replace what JSON cannot carry instead of throwing.
std::string DumpJson(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

uint64_t CounterOf(const json& stats, const char* name) {
  const auto it = stats.find(name);
  return it != stats.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

// ---- Gathering every rank's JSON to rank 0.

// Returns, on rank 0, every rank's text in rank order; elsewhere an empty vector.
// Collective over `comm`. Returns false (on every rank) if the texts cannot be gathered.
bool GatherStrings(MPI_Comm comm, const std::string& mine, std::vector<std::string>* all) {
  int rank = 0;
  int size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  // MPI counts are ints: a rank whose stats do not fit sends nothing rather than a wrong count.
  const int length = mine.size() <= static_cast<size_t>(INT_MAX) ? static_cast<int>(mine.size()) : 0;
  std::vector<int> lengths(rank == 0 ? size : 0);
  if (PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm) != MPI_SUCCESS) {
    return false;
  }
  std::vector<int> displacements(lengths.size());
  long long total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    displacements[r] = static_cast<int>(total);
    total += lengths[r];
  }
  // Rank 0 alone knows whether the concatenation fits an int displacement; all ranks must agree
  // before calling Gatherv.
  int fits = total <= INT_MAX ? 1 : 0;
  if (PMPI_Bcast(&fits, 1, MPI_INT, 0, comm) != MPI_SUCCESS || !fits) return false;
  std::string buffer(static_cast<size_t>(total), '\0');
  if (PMPI_Gatherv(mine.data(), length, MPI_CHAR, buffer.data(), lengths.data(),
                   displacements.data(), MPI_CHAR, 0, comm) != MPI_SUCCESS) {
    return false;
  }
  for (size_t r = 0; r < lengths.size(); ++r) {
    all->push_back(buffer.substr(static_cast<size_t>(displacements[r]), lengths[r]));
  }
  return true;
}

// Builds the job document from each rank's JobStats JSON text.
json BuildJobDocument(const std::vector<std::string>& rank_texts) {
  json document = {{"stagio_version", kStagioVersion},
                   {"ranks", rank_texts.size()},
                   {"per_rank", json::array()}};
  json total;
  json total_files = json::object();
  for (size_t r = 0; r < rank_texts.size(); ++r) {
    json rank_stats = json::parse(rank_texts[r], nullptr, /*allow_exceptions=*/false);
    if (!rank_stats.is_object()) rank_stats = json::object();  // discarded: unparseable text
    // One copy of the settings, rank 0's: a setting may differ between ranks only through
    // their environments, which a job launcher gives every rank alike.
    if (rank_stats.contains("settings")) {
      if (r == 0) document["settings"] = rank_stats["settings"];
      rank_stats.erase("settings");
    }
    json entry = {{"rank", r}};
    entry.update(rank_stats);
    document["per_rank"].push_back(entry);
    if (rank_stats.contains("total")) MergeJsonInto(&total, rank_stats["total"]);
    if (rank_stats.contains("files")) MergeJsonInto(&total_files, rank_stats["files"]);
  }
  if (total.is_null()) total = JobStats().ToJson()["total"];
  total["files"] = total_files;
  document["total"] = total;
  return document;
}

// Writes `text` to `path` via a temporary file and rename, so a reader never sees half a file.
bool WriteFileAtomically(const std::string& path, const std::string& text, std::string* error) {
  const std::string temporary = path + ".tmp";
  FILE* file = std::fopen(temporary.c_str(), "w");
  if (file == nullptr) {
    *error = temporary + ": " + std::strerror(errno);
    return false;
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    *error = temporary + ": " + std::strerror(written ? errno : write_errno);
    std::remove(temporary.c_str());
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    *error = path + ": " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

// ---- The human summary.

std::string FormatBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
    value /= 1024;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return text;
}

struct Traffic {
  uint64_t calls = 0;
  uint64_t bytes = 0;
};

// Sums the per-kind call table over kinds whose name contains `direction` ("read", "write").
Traffic SumCalls(const json& total, const char* direction) {
  Traffic traffic;
  const auto calls = total.find("calls");
  if (calls == total.end() || !calls->is_object()) return traffic;
  for (auto it = calls->begin(); it != calls->end(); ++it) {
    if (it.key().find(direction) == std::string::npos) continue;
    traffic.calls += CounterOf(*it, "calls");
    traffic.bytes += CounterOf(*it, "bytes");
  }
  return traffic;
}

// Accuracy: the share of prefetched blocks that a read used. Coverage: the share of the blocks
// reads needed from storage that prefetching brought in (the rest were demand fetches).
void PrintPrefetchSummary(const json& total) {
  const uint64_t issued = CounterOf(total, CounterName(Counter::prefetch_issued));
  const uint64_t used = CounterOf(total, CounterName(Counter::prefetch_used));
  const uint64_t late = CounterOf(total, CounterName(Counter::prefetch_late));
  const uint64_t wasted = CounterOf(total, CounterName(Counter::prefetch_wasted));
  const uint64_t demand = CounterOf(total, CounterName(Counter::demand_fetches));
  if (issued == 0) {
    std::printf("stagio: no prefetches\n");
    return;
  }
  std::printf("stagio: %llu prefetches, %llu used, %llu late, %llu wasted: accuracy %.1f%%, "
              "coverage %.1f%%\n",
              static_cast<unsigned long long>(issued), static_cast<unsigned long long>(used),
              static_cast<unsigned long long>(late), static_cast<unsigned long long>(wasted),
              100.0 * static_cast<double>(used) / static_cast<double>(issued),
              100.0 * static_cast<double>(used) / static_cast<double>(used + demand));
}

void PrintSummary(const json& total, size_t ranks, const std::string& written_path) {
  const Traffic reads = SumCalls(total, "read");
  const Traffic writes = SumCalls(total, "write");
  const uint64_t hits = CounterOf(total, CounterName(Counter::cache_hits));
  const uint64_t misses = CounterOf(total, CounterName(Counter::cache_misses));
  const uint64_t flushed = CounterOf(total, CounterName(Counter::dirty_bytes_flushed));
  const uint64_t errors = CounterOf(total, CounterName(Counter::write_back_errors));
  const uint64_t blocked_ns = CounterOf(total, CounterName(Counter::blocked_ns));

  std::printf("stagio: %llu read calls, %s read; %llu write calls, %s written (%zu ranks)\n",
              static_cast<unsigned long long>(reads.calls), FormatBytes(reads.bytes).c_str(),
              static_cast<unsigned long long>(writes.calls), FormatBytes(writes.bytes).c_str(),
              ranks);
  if (hits + misses == 0) {
    std::printf("stagio: cache hit ratio n/a (no cached accesses)\n");
  } else {
    std::printf("stagio: cache hit ratio %.1f%% (%llu hits, %llu misses)\n",
                100.0 * static_cast<double>(hits) / static_cast<double>(hits + misses),
                static_cast<unsigned long long>(hits), static_cast<unsigned long long>(misses));
  }
  PrintPrefetchSummary(total);
  std::printf("stagio: %s flushed to storage, %llu write-back errors\n",
              FormatBytes(flushed).c_str(), static_cast<unsigned long long>(errors));
  std::printf("stagio: %.3f s blocked in stagio, %.3f s of it in reads (summed over ranks)\n",
              static_cast<double>(blocked_ns) / 1e9,
              static_cast<double>(CounterOf(total, CounterName(Counter::read_blocked_ns))) / 1e9);
  if (!written_path.empty()) std::printf("stagio: stats written to %s\n", written_path.c_str());
  std::fflush(stdout);
}

}  // namespace

const char* CounterName(Counter counter) {
  static const char* const kNames[] = {
#define STAGIO_COUNTER_NAME(name, description) #name,
      STAGIO_FILE_COUNTERS(STAGIO_COUNTER_NAME)
#undef STAGIO_COUNTER_NAME
  };
  const size_t index = static_cast<size_t>(counter);
  return index < sizeof(kNames) / sizeof(kNames[0]) ? kNames[index] : "unknown";
}

void FileStats::RecordCall(const std::string& kind, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(calls_mutex_);
  CallStats& call = calls_[kind];
  call.calls += 1;
  call.bytes += bytes;
}

void FileStats::MergeFrom(const FileStats& other) {
  if (&other == this) return;  // would double everything and self-deadlock on the mutex
  for (size_t i = 0; i < counters_.size(); ++i) {
    counters_[i].fetch_add(other.counters_[i].load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
  }
  // Copy first so the two mutexes are never held together (no lock-order to get wrong).
  std::map<std::string, CallStats> other_calls;
  {
    std::lock_guard<std::mutex> lock(other.calls_mutex_);
    other_calls = other.calls_;
  }
  std::lock_guard<std::mutex> lock(calls_mutex_);
  for (const auto& [kind, call] : other_calls) {
    calls_[kind].calls += call.calls;
    calls_[kind].bytes += call.bytes;
  }
}

json FileStats::ToJson() const {
  json result = json::object();
  for (size_t i = 0; i < counters_.size(); ++i) {
    result[CounterName(static_cast<Counter>(i))] = counters_[i].load(std::memory_order_relaxed);
  }
  json calls = json::object();
  {
    std::lock_guard<std::mutex> lock(calls_mutex_);
    for (const auto& [kind, call] : calls_) {
      calls[kind] = {{"calls", call.calls}, {"bytes", call.bytes}};
    }
  }
  result["calls"] = calls;
  return result;
}

void JobStats::AddClosedFile(const std::string& path, const FileStats& stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  files_[path].MergeFrom(stats);
}

void JobStats::SetRun(double run_s, const std::string& host,
                      const std::map<std::string, std::string>& settings) {
  std::lock_guard<std::mutex> lock(mutex_);
  run_ = {{"run_s", run_s}, {"host", host}, {"settings", settings}};
}

json JobStats::ToJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  FileStats total;
  json files = json::object();
  for (const auto& [path, stats] : files_) {
    files[path] = stats.ToJson();
    total.MergeFrom(stats);
  }
  json result = {{"files", files}, {"total", total.ToJson()}};
  if (run_.is_object()) result.update(run_);
  return result;
}

void WriteJobStats(MPI_Comm comm, const JobStats& stats, const std::string& path, bool summary) {
  // nlohmann throws (allocation, bad input); this runs inside MPI_Finalize, where an exception
  // would abort the application after its work is done. Every rank still makes the same
  // collective calls, because only rank 0 does anything that can fail after the gather.
  std::string mine;
  try {
    mine = DumpJson(stats.ToJson(), -1);
  } catch (const std::exception& e) {
    LogError(std::string("cannot encode statistics: ") + e.what());
    mine.clear();
  }
  std::vector<std::string> rank_texts;
  if (!GatherStrings(comm, mine, &rank_texts)) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0) LogError("cannot gather statistics from all ranks; none written");
    return;
  }
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  try {
    const json document = BuildJobDocument(rank_texts);
    std::string written_path;
    if (!path.empty()) {
      std::string error;
      if (WriteFileAtomically(path, DumpJson(document, 2) + "\n", &error)) {
        written_path = path;
      } else {
        LogError("cannot write statistics to " + path + ": " + error);
      }
    }
    if (summary) PrintSummary(document["total"], rank_texts.size(), written_path);
  } catch (const std::exception& e) {
    LogError("cannot write statistics to " + path + ": " + e.what());
  }
}

}  // namespace stagio
