// Preexec: the process-wide side of pre-execution prefetching. It starts and joins helper runs
// (stagio_preexec_start/join), tells them about the main thread's opens, and owns the PPIS gate
// that the engine's entry points pass through (MainThreadIo).
//
// Pre-execution needs MPI_THREAD_MULTIPLE: the helper queries datatypes and, in collective-cache
// mode, sends prefetch hints to other ranks. stagio asks for it at MPI_Init unless
// stagio_preexec=off; if MPI provides less, runs start no helper and rank 0 warns once
// (ARCHITECTURE.md: helper threads then call no MPI).
#pragma once

#include <mpi.h>

#include <memory>
#include <mutex>
#include <vector>

#include "mpiio/open_file.h"
#include "preexec/preexec_helper.h"
#include "preexec/io_priority_gate.h"

namespace stagio {

class Runtime;

class Preexec {
 public:
  Preexec(Runtime& runtime, int world_rank, int thread_level)
      : runtime_(runtime), world_rank_(world_rank), thread_level_(thread_level) {}
  ~Preexec() { JoinAll(); }

  IoPriorityGate* gate() { return &gate_; }

  // Main thread. Starts `slice` on a helper thread for `files` (handles stagio does not serve
  // are left out: the helper's calls for them are dropped). Null, and no thread, when
  // pre-execution is off or MPI lacks MPI_THREAD_MULTIPLE.
  std::shared_ptr<HelperRun> Start(HelperRun::Slice slice, void* arg, const MPI_File* files,
                                   int file_count);
  void Join(const std::shared_ptr<HelperRun>& run);
  // Joins every run still going (MPI_Finalize, for a program that did not).
  void JoinAll();
  // Main thread: stagio now serves `file`, just opened.
  void OnMainOpen(const std::shared_ptr<OpenFile>& file);

 private:
  Runtime& runtime_;
  int world_rank_;
  int thread_level_;
  IoPriorityGate gate_;
  std::mutex runs_mutex_;
  std::vector<std::shared_ptr<HelperRun>> runs_;
};

}  // namespace stagio
