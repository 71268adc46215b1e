// Runtime: the process-wide part of stagio, created at MPI_Init and torn down at MPI_Finalize.
//
// It owns the settings, the block cache, the I/O thread (write-back and prefetch), the block
// server (collective cache), the pre-execution helpers, the storage driver chain, the table of open files and the job
// stats. There is exactly one, reached through Runtime::Get(), because
// MPI itself is process-wide: the wrappers have nowhere else to find it.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cache/block_cache.h"
#include "cache/io_thread.h"
#include "common/config.h"
#include "common/stats.h"
#include "direct/application_time.h"
#include "mpiio/argument_checks.h"
#include "collective/block_server.h"
#include "mpiio/open_file.h"
#include "node/node_budget.h"
#include "node/node_map.h"
#include "preexec/preexec.h"
#include "storage/driver.h"
#include "storage/storage_speed.h"

namespace stagio {

class FaultInjectingDriver;
class IondDriver;

class Runtime {
 public:
  // Null before MPI_Init, after MPI_Finalize, and when STAGIO_DISABLE=1.
  static Runtime* Get();
  // `thread_level` is what MPI provided; the collective cache needs MPI_THREAD_MULTIPLE.
  static void Start(int world_rank, int thread_level);
  static void Stop();

  const Settings& settings() const { return settings_; }
  // Applies the process-wide parts of `settings` (cache size, water marks) if they changed.
  void ApplyProcessSettings(const Settings& settings);

  // Checks datatypes without raising errors on the application's communicators.
  const DatatypeChecker& datatype_checker() const { return *datatype_checker_; }
  BlockCache& cache() { return *cache_; }
  // An aggregator of a collective-cache file holds the blocks of ranks that hold none, so its
  // cache may grow to their share: `ranks` times stagio_cache_size (seed 000: every client
  // contributes memory to the global cache pool). The largest pool asked for stays.
  void PoolCacheOfRanks(uint64_t ranks);
  IoThread& io_thread() { return *io_thread_; }
  // Serves this rank's blocks to other ranks; null unless the collective cache is possible
  // (enabled, and MPI_THREAD_MULTIPLE provided).
  BlockServer* block_server() { return block_server_.get(); }
  // Pre-execution helpers and the PPIS gate.
  Preexec& preexec() { return *preexec_; }
  Driver* driver() { return driver_; }
  FaultInjectingDriver* fault_driver() { return fault_driver_.get(); }
  // True when stagio's storage is the file system MPI-IO itself reads and writes, with nothing
  // between (no I/O-node daemon, no injected faults): then the direct path can hand a call to
  // MPI-IO and storage sees the same bytes either way.
  bool storage_is_plain() const { return !iond_driver_ && !fault_driver_; }
  JobStats& job_stats() { return job_stats_; }
  // How fast each device the process's files are on moved their bytes (the direct path).
  DeviceSpeeds& device_speeds() { return device_speeds_; }
  // How much time the application leaves between its MPI-IO calls (the direct path).
  ApplicationTime& application_time() { return application_time_; }
  uint64_t NextFileId() { return ++last_file_id_; }
  // Which ranks of the job share a node, learnt at MPI_Init.
  const NodeMap& node_map() const { return node_map_; }
  // Node segments are named by their leader's serial (NodeSegment::NameFor): the first this
  // process has not used, and the one the ranks of a file agreed on, which is never reused.
  uint64_t next_segment_serial() const { return next_segment_serial_.load(); }
  void UseSegmentSerial(uint64_t serial);
  // The memory account of this rank's node that every node-cache table charges, made or
  // attached at first use. Null, with a warning once, if it cannot be had: each table is then
  // bounded by its own size only.
  std::shared_ptr<NodeBudget> node_budget();

  // Error codes of class MPI_ERR_IO whose strings say what stagio was doing.
  int write_back_error_code() const { return write_back_error_code_; }
  int storage_read_error_code() const { return storage_read_error_code_; }

  // The open-file table.
  void AddFile(std::shared_ptr<OpenFile> file);
  std::shared_ptr<OpenFile> FindFile(MPI_File handle);
  std::shared_ptr<OpenFile> TakeFile(MPI_File handle);

 private:
  Runtime(int world_rank, const Settings& settings, int thread_level);
  ~Runtime();
  void FinalizeOpenFiles();
  // Records the run's time, host and settings in the job's stats, for the report.
  void RecordRun();

  // Before everything else: the run's time counts stagio's start-up.
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  int world_rank_;
  Settings settings_;
  // First, so that it goes last: the threads torn down before it may still check datatypes.
  std::unique_ptr<DatatypeChecker> datatype_checker_;
  std::unique_ptr<BlockCache> cache_;
  std::unique_ptr<IoThread> io_thread_;
  std::unique_ptr<BlockServer> block_server_;
  std::unique_ptr<Preexec> preexec_;
  std::unique_ptr<FaultInjectingDriver> fault_driver_;
  std::unique_ptr<IondDriver> iond_driver_;  // the I/O-node tier, on top of the chain if set
  Driver* driver_ = nullptr;
  JobStats job_stats_;
  DeviceSpeeds device_speeds_;
  ApplicationTime application_time_{ApplicationTime::Clock::now()};
  NodeMap node_map_;
  std::atomic<uint64_t> next_segment_serial_{0};
  std::mutex node_budget_mutex_;
  std::shared_ptr<NodeBudget> node_budget_;
  bool node_budget_tried_ = false;
  uint64_t last_file_id_ = 0;
  uint64_t pooled_ranks_ = 1;  // PoolCacheOfRanks
  int write_back_error_code_ = MPI_ERR_IO;
  int storage_read_error_code_ = MPI_ERR_IO;
  std::mutex files_mutex_;
  std::unordered_map<MPI_File, std::shared_ptr<OpenFile>> files_;
};

}  // namespace stagio
