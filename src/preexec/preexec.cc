#include "preexec/preexec.h"

#include <algorithm>

#include "common/log.h"
#include "mpiio/runtime.h"

namespace stagio {

namespace {

// Calls a helper dropped for handles it did not know go into the job stats under this name.
constexpr const char* kUnattributedName = "(pre-execution helper: unknown file handles)";

}  // namespace

std::shared_ptr<HelperRun> Preexec::Start(HelperRun::Slice slice, void* arg,
                                          const MPI_File* files, int file_count) {
  if (!slice || runtime_.settings().preexec == "off") return nullptr;
  if (thread_level_ < MPI_THREAD_MULTIPLE) {
    WarnOnce(world_rank_ == 0,
             "stagio_preexec=" + runtime_.settings().preexec +
                 " needs MPI_THREAD_MULTIPLE, which MPI did not provide; pre-execution "
                 "helpers do not run");
    return nullptr;
  }
  auto run = std::make_shared<HelperRun>(runtime_, &gate_, slice, arg);
  for (int i = 0; files && i < file_count; ++i) {
    std::shared_ptr<OpenFile> file = runtime_.FindFile(files[i]);
    if (file) run->Bind(file);
  }
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    runs_.push_back(run);
  }
  run->Start();
  return run;
}

void Preexec::Join(const std::shared_ptr<HelperRun>& run) {
  if (!run) return;
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    auto it = std::find(runs_.begin(), runs_.end(), run);
    if (it == runs_.end()) return;  // joined already
    runs_.erase(it);
  }
  run->Join();
  const FileStats& unattributed = run->unattributed_stats();
  if (unattributed.Get(Counter::preexec_dropped) > 0 ||
      unattributed.Get(Counter::preexec_skipped_lagging) > 0) {
    runtime_.job_stats().AddClosedFile(kUnattributedName, unattributed);
  }
}

void Preexec::JoinAll() {
  std::vector<std::shared_ptr<HelperRun>> runs;
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    runs = runs_;
  }
  if (!runs.empty()) {
    WarnOnce(world_rank_ == 0, "a pre-execution helper was still running at MPI_Finalize; "
                               "call stagio_preexec_join before it");
  }
  for (const auto& run : runs) Join(run);
}

void Preexec::OnMainOpen(const std::shared_ptr<OpenFile>& file) {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  for (const auto& run : runs_) run->OnMainOpen(file);
}

}  // namespace stagio
