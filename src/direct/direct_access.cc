#include "direct/direct_access.h"

#include <vector>

#include "mpiio/blocking_form.h"
#include "mpiio/file_tiers.h"
#include "mpiio/mpi_results.h"
#include "mpiio/runtime.h"
#include "storage/request_timer.h"

namespace stagio::engine {

namespace {

StorageDirection DirectionOf(const AccessCall& call) {
  return call.direction == Direction::kRead ? StorageDirection::kRead : StorageDirection::kWrite;
}

// The file bytes a call of `bytes` stream bytes at `offset` (etypes of the view) covers.
std::vector<Extent> FileExtentsOf(const OpenFile& file, MPI_Offset offset, uint64_t bytes) {
  std::vector<Extent> extents;
  file.view.MapStreamRange(static_cast<uint64_t>(offset) * file.view.etype_size(), bytes,
                           &extents);
  return extents;
}

MPI_Offset PositionOf(const OpenFile& file, const AccessCall& call) {
  return call.positioning == Positioning::kIndividual ? file.individual_pointer : call.offset;
}

}  // namespace

DirectReason ChooseDirectPath(Runtime& runtime, OpenFile& file, const AccessCall& call,
                              uint64_t bytes, Extent* written) {
  const bool write = call.direction == Direction::kWrite;
  if (bytes == 0 || !runtime.storage_is_plain()) return DirectReason::kCached;
  if (call.completion == Completion::kSplitBegin) return DirectReason::kCached;
  // Collective calls of a collective-cache file run two-phase I/O over the owners.
  if (call.collective && file.collective()) return DirectReason::kCached;
  // Owners on other nodes may hold this rank's unwritten bytes, which no tier of this rank
  // can take back before the write (ForgetRange): they would reach storage after it.
  if (write && file.wrote_to_owners.load()) return DirectReason::kCached;
  const DirectMode mode = ParseDirectMode(file.settings.direct);
  DirectCallFacts facts;
  facts.write = write;
  facts.bytes = bytes;
  facts.cache_capacity = file.settings.cache_size;
  if (mode == DirectMode::kAuto) {
    facts.storage_seconds_per_byte =
        file.backend->storage_speed().SecondsPerByte(DirectionOf(call));
    facts.block_size = file.settings.block_size;
    facts.reads_through_cache = file.cached_reads;
    facts.outside_seconds_per_byte = runtime.application_time().OutsideSecondsPerByte(bytes);
  }
  const DirectReason reason = file.direct_policy.Decide(mode, facts);
  if (reason == DirectReason::kCached || !write) return reason;
  // ROMIO writes the pieces of a non-contiguous access by reading the span around them and
  // writing the whole span back (data sieving, on by default, under its own file lock), which
  // would write old bytes over a write-back of another rank's bytes in that span, since
  // write-back does not take that lock. Only writes of one contiguous file range go direct;
  // reads only read. Mapped last, and once: a write that stays in the cache maps it there.
  const std::vector<Extent> extents = FileExtentsOf(file, PositionOf(file, call), bytes);
  if (extents.size() != 1) return DirectReason::kCached;
  *written = extents.front();
  return reason;
}

int DirectAccess(OpenFile& file, const AccessCall& call, uint64_t bytes, const Extent& written,
                 bool* through_cache) {
  *through_cache = false;
  // This rank's own call, at an explicit offset: the individual pointer is stagio's.
  AccessCall direct = call;
  direct.collective = false;
  direct.positioning = Positioning::kExplicit;
  direct.offset = PositionOf(file, call);
  const bool write = call.direction == Direction::kWrite;
  // A write: no tier may keep a copy of its bytes that could reach storage after it. A read:
  // storage must hold this rank's own writes.
  Status ready;
  if (write) {
    ready = file.tiers.ForgetRange(static_cast<uint64_t>(written.offset), written.length);
  } else if (file.cached_writes) {
    ready = file.tiers.Flush(Callers::kThisRank);
    if (ready.ok()) file.cached_writes = false;
  }
  if (!ready.ok()) {
    // The cache still holds the bytes; the call goes there, and the failure is reported at
    // the next sync or close.
    file.backend->RecordWriteBackError(ready);
    *through_cache = true;
    return MPI_SUCCESS;
  }

  // Set before the write, which may change storage even if it fails.
  if (write) file.direct_writes = true;
  MPI_Status status;
  const RequestTimer timer(bytes);
  const int rc = CallBlocking(direct, &status);
  const double took = timer.Seconds();
  if (rc != MPI_SUCCESS) return rc;  // MPI-IO raised it through the file's handler

  const MPI_Count moved = StatusBytes(status);
  file.backend->storage_speed().Record(DirectionOf(call), static_cast<uint64_t>(moved), took);
  FileStats* stats = file.backend->stats();
  stats->Add(Counter::direct_calls, 1);
  stats->Add(Counter::direct_bytes, static_cast<uint64_t>(moved));
  stats->RecordCall(call.kind, static_cast<uint64_t>(moved));
  if (write) {
    file.backend->GrowKnownSize(static_cast<uint64_t>(written.offset) + written.length);
  }
  // MPI moves the individual pointer by the amount requested, whatever was read.
  if (call.positioning == Positioning::kIndividual) {
    file.individual_pointer += static_cast<MPI_Offset>(bytes / file.view.etype_size());
  }
  if (call.completion == Completion::kNonblocking) {
    return StartCompletedRequest(MPI_SUCCESS, moved, call.request);
  }
  if (call.status != MPI_STATUS_IGNORE) *call.status = status;
  return MPI_SUCCESS;
}

void CatchUpWithDirectWrites(OpenFile& file) {
  if (!file.direct_writes) return;
  InvalidateTiers(file, Callers::kThisRank, Staleness::kStorageChanged);
  file.direct_writes = false;
}

}  // namespace stagio::engine
