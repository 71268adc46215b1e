// Data access entry points: every read/write/iread/iwrite/_begin/_end variant lands here.
#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include "direct/direct_access.h"
#include "mpiio/argument_checks.h"
#include "mpiio/blocking_form.h"
#include "mpiio/data_path.h"
#include "mpiio/engine.h"
#include "mpiio/file_tiers.h"
#include "mpiio/inside_call.h"
#include "mpiio/mpi_quirks.h"
#include "mpiio/mpi_results.h"
#include "mpiio/prefetching.h"
#include "mpiio/runtime.h"
#include "collective/two_phase.h"

namespace stagio::engine {

namespace {

// Adds the wall time of a scope to one of the file's time counters.
template <Counter counter>
class ScopeTimer {
 public:
  explicit ScopeTimer(FileStats* stats)
      : stats_(stats), start_(std::chrono::steady_clock::now()) {}
  ~ScopeTimer() {
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    stats_->Add(counter, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
  }

 private:
  FileStats* stats_;
  std::chrono::steady_clock::time_point start_;
};
using BlockedTimer = ScopeTimer<Counter::blocked_ns>;  // any call
using ReadTimer = ScopeTimer<Counter::read_blocked_ns>;  // reads stagio serves

// The checks MPI-IO makes before it moves a byte, in ROMIO's order, so that a call with several
// bad arguments gets the class plain MPI-IO gives it: the first failing check is the call's
// error. Once they pass, *bytes is the size of the transfer.
int ValidateAccess(const Runtime& runtime, const OpenFile& file, const AccessCall& call,
                   uint64_t* bytes) {
  if (call.count < 0) return MPI_ERR_COUNT;
  int error = runtime.datatype_checker().Check(call.datatype);
  if (error != MPI_SUCCESS) return error;
  const bool explicit_offset = call.positioning == Positioning::kExplicit;
  if (explicit_offset && call.offset < 0) return MPI_ERR_ARG;
  error = CheckTransferSize(call.count, call.datatype, bytes);
  if (error != MPI_SUCCESS) return error;
  // Only whole etypes can be accessed.
  if (*bytes % file.view.etype_size() != 0) return MPI_ERR_IO;
  // ROMIO's independent blocking calls succeed at once when there is nothing to move, before
  // they look at the access mode; every other form looks first.
  if (*bytes == 0 && !call.collective && call.completion == Completion::kBlocking) {
    return MPI_SUCCESS;
  }
  const int access_mode = file.amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
  if (call.direction == Direction::kWrite && access_mode == MPI_MODE_RDONLY) {
    return MPI_ERR_READ_ONLY;
  }
  if (call.direction == Direction::kRead && access_mode == MPI_MODE_WRONLY) return MPI_ERR_ACCESS;
  // An access that would end past the largest file offset is refused; plain MPI-IO computes
  // its byte offset in 64 bits and wraps around to other bytes of the file.
  const MPI_Offset position = explicit_offset ? call.offset : file.individual_pointer;
  uint64_t stream_end = 0;
  if (!StreamEnd(position, file.view.etype_size(), *bytes, &stream_end) ||
      !file.view.CanMap(stream_end)) {
    return MPI_ERR_ARG;
  }
  return MPI_SUCCESS;
}

// A call stagio does not serve itself: write back and drop what it holds of the file, then let
// PMPI do it. The individual file pointer is handed over and taken back, so both stay one.
int ThroughPmpi(Runtime& runtime, OpenFile& file, const AccessCall& call, PmpiCall pmpi) {
  file.backend->stats()->Add(Counter::passthrough_calls, 1);
  // PMPI reads and writes the backing file system: every tier must have written back what it
  // holds of the file (a failure is kept for the next sync or close), and no tier may keep a
  // copy of bytes PMPI will change.
  Status flushed = file.tiers.Flush(Callers::kThisRank);
  if (!flushed.ok()) file.backend->RecordWriteBackError(flushed);
  InvalidateTiers(file, Callers::kThisRank, Staleness::kPeersWrote);
  const bool individual = call.positioning == Positioning::kIndividual;
  if (individual) PMPI_File_seek(file.handle, file.individual_pointer, MPI_SEEK_SET);
  // Where MPI's file requests must not progress on two threads at once, nonblocking and split
  // calls are done in their blocking form (blocking_form.h).
  const bool blocking_form = kBlockingFormForMpi && call.completion != Completion::kBlocking;
  MPI_Count split_bytes = 0;
  const int rc = blocking_form ? CallInBlockingForm(call, &split_bytes) : pmpi();
  if (individual) PMPI_File_get_position(file.handle, &file.individual_pointer);
  if (call.direction == Direction::kWrite) {
    // Storage changed behind every tier. A prefetch that read it between the invalidation
    // above and PMPI's write (a pre-execution helper's, or an owner's acting on an earlier
    // hint) could have cached the old bytes: invalidate again, the daemons too.
    InvalidateTiers(file, Callers::kThisRank, Staleness::kStorageChanged);
    file.backend->RefreshKnownSize();
  }
  // A _begin that failed opened nothing, so the next _end is not PMPI's to match (ROMIO can
  // think otherwise after a failed read_ordered_begin; a correct program does not depend on it).
  // One done in its blocking form has its _end answered by stagio.
  if (call.completion == Completion::kSplitBegin && rc == MPI_SUCCESS) {
    file.split = SplitCollective{true, !blocking_form, MPI_SUCCESS, split_bytes};
  }
  // The program made this call: count it, at the size it asked for (what PMPI moved is in a
  // status the program may ignore), so that the stats of a file stagio does not cache still
  // say what the program read and wrote.
  uint64_t requested = 0;
  if (rc == MPI_SUCCESS &&
      CheckTransferSize(call.count, call.datatype, &requested) == MPI_SUCCESS) {
    file.backend->stats()->RecordCall(call.kind, requested);
  }
  return rc;
}

// The call's buffer and where its data stream starts.
Transfer TransferOf(const OpenFile& file, const AccessCall& call) {
  const MPI_Offset position =
      call.positioning == Positioning::kExplicit ? call.offset : file.individual_pointer;
  return Transfer{static_cast<char*>(call.buffer), call.count, call.datatype,
                  static_cast<uint64_t>(position) * file.view.etype_size()};
}

// A read that went direct to time the storage (DirectReason::kProbe) still tells the file's
// prefetcher what it read, so that where storage turns out slow the cached calls that follow
// are predicted from the whole stream, not from a stream that starts a few calls late. The
// blocks it predicts are queued unless the probe found storage fast: the calls they are for
// will then go direct too.
void AfterProbingRead(Runtime& runtime, OpenFile& file, const Transfer& transfer,
                      uint64_t bytes) {
  const ReadPrefetch prefetch = PlanPrefetchForRead(runtime, file, transfer, bytes);
  const std::optional<double> speed =
      file.backend->storage_speed().SecondsPerByte(StorageDirection::kRead);
  if (!DirectPolicy::IsFast(speed, bytes)) QueuePrefetches(runtime, file, prefetch.blocks);
}

int Serve(Runtime& runtime, OpenFile& file, const AccessCall& call) {
  uint64_t bytes = 0;
  // Argument errors are the call's own, whatever its completion mode.
  int error = ValidateAccess(runtime, file, call, &bytes);
  if (error == MPI_SUCCESS && call.completion == Completion::kSplitBegin && file.split.active) {
    error = MPI_ERR_IO;  // one split collective per file at a time; ROMIO's class for it
  }
  if (error != MPI_SUCCESS) return RaiseFileError(file.handle, error);

  const Transfer transfer = TransferOf(file, call);
  Extent written{0, 0};
  const DirectReason direct = ChooseDirectPath(runtime, file, call, bytes, &written);
  runtime.application_time().Moved(bytes);
  if (direct != DirectReason::kCached) {
    bool through_cache = false;
    const int rc = DirectAccess(file, call, bytes, written, &through_cache);
    if (!through_cache) {
      if (rc == MPI_SUCCESS && direct == DirectReason::kProbe &&
          call.direction == Direction::kRead) {
        AfterProbingRead(runtime, file, transfer, bytes);
      }
      return rc;
    }
  }
  CatchUpWithDirectWrites(file);

  uint64_t moved = 0;
  // Collective calls of a collective-cache file run two-phase I/O through the owners' caches.
  const bool two_phase = call.collective && file.collective();
  if (call.direction == Direction::kRead) {
    file.cached_reads = true;
    ReadTimer timer(file.backend->stats());
    Status status;
    if (two_phase) {
      const bool collective_prefetch = UsesCollectivePrefetch(file);
      ReadPrefetch prefetch;
      if (!collective_prefetch) prefetch = PlanPrefetchForRead(runtime, file, transfer, bytes);
      status = TwoPhaseRead(runtime, file, transfer, collective_prefetch, &moved);
      QueuePrefetches(runtime, file, prefetch.blocks);
    } else {
      const ReadPrefetch prefetch = PlanPrefetchForRead(runtime, file, transfer, bytes);
      status = ReadThroughCache(runtime.cache(), file, transfer, prefetch.scope, &moved);
      QueuePrefetches(runtime, file, prefetch.blocks);
    }
    if (!status.ok()) error = ReportFailure(status, runtime.storage_read_error_code());
  } else {
    // A collective write may leave this rank's bytes at other owners (OpenFile::wrote_to_owners).
    if (two_phase) file.wrote_to_owners.store(true);
    file.cached_writes = true;
    Status status = two_phase ? TwoPhaseWrite(runtime, file, transfer)
                              : WriteThroughCache(runtime.cache(), file, transfer);
    if (status.ok()) {
      moved = bytes;
      runtime.io_thread().Notify();
    } else {
      error = ReportFailure(status, MPI_ERR_IO);
    }
  }
  // MPI moves the individual pointer by the amount requested, whatever was read.
  if (error == MPI_SUCCESS && call.positioning == Positioning::kIndividual) {
    file.individual_pointer += static_cast<MPI_Offset>(bytes / file.view.etype_size());
  }
  file.backend->stats()->RecordCall(call.kind, moved);

  // An I/O error surfaces where MPI puts it: at once for a blocking call, at the wait for a
  // nonblocking one, at the _end for a split collective.
  switch (call.completion) {
    case Completion::kBlocking:
      if (error == MPI_SUCCESS) SetStatusBytes(call.status, static_cast<MPI_Count>(moved));
      return RaiseFileError(file.handle, error);
    case Completion::kNonblocking:
      return StartCompletedRequest(error, static_cast<MPI_Count>(moved), call.request);
    case Completion::kSplitBegin:
      file.split = SplitCollective{true, false, error, static_cast<MPI_Count>(moved)};
      return MPI_SUCCESS;
  }
  return MPI_ERR_INTERN;
}

// The split collectives of files stagio does not manage (sequential-mode files), where those
// are done in their blocking form (mpi_quirks.h): what each _begin did, for its _end. Any
// thread may make the calls.
class UnmanagedSplits {
 public:
  void Begin(MPI_File handle, const SplitCollective& split) {
    std::lock_guard<std::mutex> lock(mutex_);
    splits_[handle] = split;
  }
  // The _begin's result, removed; or nothing (no _begin in its blocking form).
  std::optional<SplitCollective> End(MPI_File handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = splits_.find(handle);
    if (it == splits_.end()) return std::nullopt;
    SplitCollective split = it->second;
    splits_.erase(it);
    return split;
  }

 private:
  std::mutex mutex_;
  std::map<MPI_File, SplitCollective> splits_;
};

UnmanagedSplits& Unmanaged() {
  static UnmanagedSplits splits;
  return splits;
}

// A call on a file stagio does not manage: MPI's, in its blocking form where needed.
int UnmanagedAccess(const AccessCall& call, PmpiCall pmpi) {
  if (!kBlockingFormForMpi || call.completion == Completion::kBlocking) return pmpi();
  MPI_Count split_bytes = 0;
  const int rc = CallInBlockingForm(call, &split_bytes);
  if (rc == MPI_SUCCESS && call.completion == Completion::kSplitBegin) {
    Unmanaged().Begin(call.file, SplitCollective{true, false, MPI_SUCCESS, split_bytes});
  }
  return rc;
}

}  // namespace

bool Active() { return Runtime::Get() != nullptr; }

int Access(const AccessCall& call, PmpiCall pmpi) {
  Runtime* runtime = Runtime::Get();
  std::shared_ptr<OpenFile> file = runtime ? runtime->FindFile(call.file) : nullptr;
  if (!file) return UnmanagedAccess(call, pmpi);
  BlockedTimer timer(file->backend->stats());
  InsideCall inside_call(runtime);
  SequencedCall sequenced(*file->progress);
  const bool shared_pointer = call.positioning == Positioning::kShared ||
                              call.positioning == Positioning::kOrdered;
  if (shared_pointer || file->passthrough()) return ThroughPmpi(*runtime, *file, call, pmpi);
  return Serve(*runtime, *file, call);
}

int SplitEnd(const char* kind, MPI_File handle, void* buffer, MPI_Status* status, PmpiCall pmpi) {
  Runtime* runtime = Runtime::Get();
  std::shared_ptr<OpenFile> file = runtime ? runtime->FindFile(handle) : nullptr;
  if (!file) {
    const std::optional<SplitCollective> split = Unmanaged().End(handle);
    if (!split) return pmpi();
    SetStatusBytes(status, split->bytes);
    return split->error;
  }
  BlockedTimer timer(file->backend->stats());
  InsideCall inside_call(runtime);
  // No matching _begin: ROMIO's class for it.
  if (!file->split.active) return RaiseFileError(handle, MPI_ERR_IO);
  const SplitCollective split = file->split;
  file->split = SplitCollective{};
  if (split.through_pmpi) return pmpi();
  if (split.error == MPI_SUCCESS) SetStatusBytes(status, split.bytes);
  return RaiseFileError(handle, split.error);
}

}  // namespace stagio::engine
