#include "mpiio/prefetching.h"
#include "mpiio/runtime.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <string>

#include "common/log.h"
#include "storage/fault_driver.h"
#include "storage/iond_driver.h"
#include "mpiio/file_tiers.h"
#include "mpiio/iond_settings.h"

namespace stagio {

namespace {

Runtime* g_runtime = nullptr;

int AddIoErrorCode(const char* text) {
  int code = MPI_ERR_IO;
  if (PMPI_Add_error_code(MPI_ERR_IO, &code) != MPI_SUCCESS) return MPI_ERR_IO;
  PMPI_Add_error_string(code, const_cast<char*>(text));
  return code;
}

}  // namespace

Runtime* Runtime::Get() { return g_runtime; }

void Runtime::Start(int world_rank, int thread_level) {
  if (g_runtime) return;
  std::vector<std::string> warnings;
  Settings settings = LoadProcessSettings(ProcessEnvironment(), &warnings);
  for (const std::string& warning : warnings) WarnOnce(world_rank == 0, warning);
  if (settings.disable) return;
  g_runtime = new Runtime(world_rank, settings, thread_level);
}

void Runtime::Stop() {
  if (!g_runtime) return;
  // Helpers first: they prefetch for files about to be flushed and closed.
  g_runtime->preexec_->JoinAll();
  g_runtime->FinalizeOpenFiles();
  const Settings& settings = g_runtime->settings_;
  if (!settings.stats_path.empty() || settings.summary) {
    g_runtime->RecordRun();
    WriteJobStats(MPI_COMM_WORLD, g_runtime->job_stats_, settings.stats_path, settings.summary);
  }
  delete g_runtime;
  g_runtime = nullptr;
}

void Runtime::RecordRun() {
  const std::chrono::duration<double> run = std::chrono::steady_clock::now() - started_;
  char host[256] = "";
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::map<std::string, std::string> settings;
  for (const std::string& key : KnownHintKeys()) settings[key] = FormatSetting(settings_, key);
  job_stats_.SetRun(run.count(), host, settings);
}

Runtime::Runtime(int world_rank, const Settings& settings, int thread_level)
    : world_rank_(world_rank),
      settings_(settings),
      datatype_checker_(std::make_unique<DatatypeChecker>()),
      node_map_(NodeMap::Learn(static_cast<int>(settings.node_size))) {
  cache_ = std::make_unique<BlockCache>(settings.cache_size, settings.block_size);
  io_thread_ = std::make_unique<IoThread>(
      cache_.get(),
      WriteBackPolicy(settings.write_back_high, settings.write_back_low,
                      settings.write_back_quiet_ms),
      static_cast<int>(settings.prefetch_threads));
  driver_ = PosixDriver();
  iond_driver_ = MakeIondDriver(settings, driver_, world_rank == 0);
  if (iond_driver_) driver_ = iond_driver_.get();
  if (settings.collective_cache) {
    if (thread_level >= MPI_THREAD_MULTIPLE) {
      block_server_ = std::make_unique<BlockServer>(cache_.get(), io_thread_.get());
    } else {
      WarnOnce(world_rank == 0,
               "the collective cache needs MPI_THREAD_MULTIPLE, which MPI did not provide; "
               "every rank caches its own blocks and collective calls are served per rank "
               "(set stagio_collective_cache=disable to silence this)");
    }
  }
  preexec_ = std::make_unique<Preexec>(*this, world_rank, thread_level);
  ApplyProcessSettings(settings);
  write_back_error_code_ =
      AddIoErrorCode("stagio: writing cached data back to storage failed (details on stderr)");
  storage_read_error_code_ =
      AddIoErrorCode("stagio: reading from storage failed (details on stderr)");
  // The application's time starts once stagio's start-up (node map, threads) is done.
  application_time_.StartAt(ApplicationTime::Clock::now());
}

Runtime::~Runtime() {
  // The threads go first, the helpers and the server before the I/O thread the server queues
  // prefetches on: they may be in the middle of a request through the cache.
  preexec_.reset();
  block_server_.reset();
  io_thread_.reset();
  cache_.reset();
}

void Runtime::UseSegmentSerial(uint64_t serial) {
  uint64_t next = next_segment_serial_.load();
  while (next <= serial && !next_segment_serial_.compare_exchange_weak(next, serial + 1)) {
  }
}

std::shared_ptr<NodeBudget> Runtime::node_budget() {
  std::lock_guard<std::mutex> lock(node_budget_mutex_);
  if (node_budget_tried_) return node_budget_;
  node_budget_tried_ = true;
  Status status;
  node_budget_ = NodeBudget::Attach(
      NodeBudget::NameFor(node_map_.job_tag(), node_map_.node_of(world_rank_)), &status);
  if (!node_budget_) {
    WarnOnce(true, "rank " + std::to_string(world_rank_) + " cannot share its node's memory "
                   "budget (" + status.message() + "); each file's node cache may hold as "
                   "much as the node's stagio_cache_size values together");
  }
  return node_budget_;
}

void Runtime::PoolCacheOfRanks(uint64_t ranks) {
  if (ranks <= pooled_ranks_) return;
  pooled_ranks_ = ranks;
  cache_->SetCapacity(settings_.cache_size * pooled_ranks_);
}

void Runtime::ApplyProcessSettings(const Settings& settings) {
  const uint64_t capacity = settings.cache_size * pooled_ranks_;
  if (capacity != cache_->capacity()) cache_->SetCapacity(capacity);
  io_thread_->SetPolicy(WriteBackPolicy(settings.write_back_high, settings.write_back_low,
                                settings.write_back_quiet_ms));
  if (settings.driver == "fault" && !fault_driver_) {
    fault_driver_ = std::make_unique<FaultInjectingDriver>(PosixDriver());
    // The fault driver goes under the I/O-node tier, as the direct path to storage.
    if (iond_driver_) {
      iond_driver_->set_direct(fault_driver_.get());
    } else {
      driver_ = fault_driver_.get();
    }
  }
  if (fault_driver_) settings_.driver = "fault";
  settings_.cache_size = settings.cache_size;
  settings_.write_back_high = settings.write_back_high;
  settings_.write_back_low = settings.write_back_low;
  settings_.write_back_quiet_ms = settings.write_back_quiet_ms;
}

void Runtime::FinalizeOpenFiles() {
  // MPI requires files to be closed before MPI_Finalize, but a program that forgets must not
  // lose what it wrote: flush what is still open and keep its stats.
  std::unordered_map<MPI_File, std::shared_ptr<OpenFile>> files;
  {
    std::lock_guard<std::mutex> lock(files_mutex_);
    files.swap(files_);
  }
  for (auto& [handle, file] : files) {
    Status status = file->tiers.Flush(Callers::kThisRankAlone);  // the daemons too
    Status earlier = file->backend->TakeWriteBackError();
    if (!earlier.ok()) status = std::move(earlier);
    if (!status.ok()) {
      LogError("file " + file->path + " was not closed before MPI_Finalize and writing it back "
               "failed: " + status.ToString());
    }
    if (file->node) file->node->Closing();
    InvalidateTiers(*file, Callers::kThisRankAlone, Staleness::kHandleReleased);
    cache_->UnregisterFile(file->id);
    file->node.reset();  // local: this rank's view goes, its node-mates keep theirs
    job_stats_.AddClosedFile(file->path, *file->backend->stats());
  }
}

void Runtime::AddFile(std::shared_ptr<OpenFile> file) {
  std::lock_guard<std::mutex> lock(files_mutex_);
  files_[file->handle] = std::move(file);
}

std::shared_ptr<OpenFile> Runtime::FindFile(MPI_File handle) {
  std::lock_guard<std::mutex> lock(files_mutex_);
  auto it = files_.find(handle);
  return it == files_.end() ? nullptr : it->second;
}

std::shared_ptr<OpenFile> Runtime::TakeFile(MPI_File handle) {
  std::lock_guard<std::mutex> lock(files_mutex_);
  auto it = files_.find(handle);
  if (it == files_.end()) return nullptr;
  auto file = std::move(it->second);
  files_.erase(it);
  return file;
}

}  // namespace stagio
