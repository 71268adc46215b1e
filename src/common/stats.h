// Stats: what stagio did, per file and per job, written as JSON at MPI_Finalize.
//
// Counters come from one X-macro list that yields the enum and the JSON names, as in Darshan.
// FileStats counters are atomics because the I/O thread (write-back) updates them too. The
// per-call table ("calls and bytes by kind", kind = the MPI function name without MPI_File_)
// is touched only by the application thread.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace stagio {

#define STAGIO_FILE_COUNTERS(X)                                                             \
  X(cache_hits, "block pieces served from the cache")                                      \
  X(cache_misses, "block pieces that had to be fetched from storage")                      \
  X(cache_evictions, "blocks of this file evicted from the cache")                         \
  X(storage_reads, "read requests sent to the storage driver")                             \
  X(storage_read_bytes, "bytes read from the storage driver")                              \
  X(storage_writes, "write requests sent to the storage driver")                           \
  X(dirty_bytes_flushed, "dirty bytes written back to storage")                            \
  X(write_back_errors, "failed write-back requests (reported at sync or close)")           \
  X(demand_fetches, "storage reads made because a read missed (not prefetches)")            \
  X(prefetch_issued, "blocks read from storage ahead of use")                              \
  X(prefetch_used, "prefetched blocks a read then used")                                   \
  X(prefetch_late, "prefetched blocks a read had to wait for, or fetched itself first")   \
  X(prefetch_wasted, "prefetched blocks dropped before any read used them")               \
  X(prefetch_redundant, "collective prefetch proposals dropped as redundant: proposed for "  \
                        "several ranks, or read by the call itself")                       \
  X(prefetch_already_cached, "prefetch proposals dropped because the block was cached or "  \
                             "on its way")                                                 \
  X(exchanged_bytes, "bytes this rank sent to other ranks (two-phase exchange, block service)")\
  X(remote_requests, "block requests this rank sent to owning aggregators")                \
  X(preexec_calls, "prefetch calls a pre-execution helper made for this file")             \
  X(preexec_skipped_lagging, "helper calls not fetched: the main thread had begun them")    \
  X(preexec_dirty_waits, "helper reads that waited for a main-thread write they overlap")   \
  X(preexec_gate_waits, "helper storage requests held back while the main thread did I/O") \
  X(preexec_budget_waits, "helper calls that waited: a cache's worth ahead of the main "   \
                          "thread")                                                        \
  X(preexec_dropped, "helper calls dropped: bad arguments, unknown or closed files, "       \
                     "failed fetches")                                                     \
  X(direct_calls, "calls whose bytes went straight between the application and storage, "  \
                  "past the cache (the direct path)")                                     \
  X(direct_bytes, "bytes the direct path moved")                                           \
  X(passthrough_calls, "calls sent straight to PMPI (shared pointer, atomic mode, ...)")   \
  X(blocked_ns, "wall time the application spent inside stagio for this file, ns")        \
  X(read_blocked_ns, "wall time the application spent inside stagio's reads, ns")

enum class Counter {
#define STAGIO_COUNTER_ENUM(name, description) name,
  STAGIO_FILE_COUNTERS(STAGIO_COUNTER_ENUM)
#undef STAGIO_COUNTER_ENUM
  kCount
};

const char* CounterName(Counter counter);

struct CallStats {
  uint64_t calls = 0;
  uint64_t bytes = 0;
};

class FileStats {
 public:
  void Add(Counter counter, uint64_t amount) {
    counters_[static_cast<size_t>(counter)].fetch_add(amount, std::memory_order_relaxed);
  }
  uint64_t Get(Counter counter) const {
    return counters_[static_cast<size_t>(counter)].load(std::memory_order_relaxed);
  }
  // Records one call of `kind` ("read_at_all", "iwrite_c", ...) moving `bytes`.
  void RecordCall(const std::string& kind, uint64_t bytes);
  // Adds everything in `other` to this record.
  void MergeFrom(const FileStats& other);
  nlohmann::json ToJson() const;

 private:
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Counter::kCount)> counters_{};
  mutable std::mutex calls_mutex_;
  std::map<std::string, CallStats> calls_;
};

// Per-process registry: closed files fold their stats in under their path; the job total is
// the sum over files.
class JobStats {
 public:
  void AddClosedFile(const std::string& path, const FileStats& stats);
  // What a report needs beside the counters (stagio report): the rank's run time, from
  // stagio's start in MPI_Init to MPI_Finalize, its host, and the settings in force at start.
  void SetRun(double run_s, const std::string& host,
              const std::map<std::string, std::string>& settings);
  // {"files": {path: {...}}, "total": {...}}, and "run_s", "host", "settings" once SetRun was
  // called.
  nlohmann::json ToJson() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, FileStats> files_;
  nlohmann::json run_;
};

// Collective over `comm`: gathers every rank's JobStats JSON to rank 0, which writes
//   {"stagio_version": ..., "ranks": N, "settings": {...}, "per_rank": [...], "total": {...}}
// (the settings are rank 0's; each rank's run time and host are in its per_rank entry)
// to `path` (if not empty) and, if `summary`, prints a few human lines to stdout. Uses PMPI only.
void WriteJobStats(MPI_Comm comm, const JobStats& stats, const std::string& path, bool summary);

}  // namespace stagio
