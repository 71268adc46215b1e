// File-level entry points: open, close, sync, size, view, info, atomicity, file pointer, and
// the MPI_Init/MPI_Finalize hooks.

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <optional>
#include <random>

#include "cache/shared_block_store.h"
#include "common/log.h"
#include "collective/aggregators.h"
#include "mpiio/engine.h"
#include "mpiio/file_tiers.h"
#include "mpiio/inside_call.h"
#include "mpiio/mpi_quirks.h"
#include "mpiio/mpi_results.h"
#include "mpiio/polite_wait.h"
#include "mpiio/prefetching.h"
#include "mpiio/runtime.h"

namespace stagio::engine {

namespace {

// ROMIO accepts a file-system prefix ("ufs:/scratch/f", "nfs:..."); POSIX wants the path.
std::string StoragePathOf(const char* filename) {
  const char* colon = std::strchr(filename, ':');
  if (!colon || colon - filename < 2) return filename;
  for (const char* c = filename; c < colon; ++c) {
    if (!std::isalnum(static_cast<unsigned char>(*c)) && *c != '_') return filename;
  }
  return colon + 1;
}

OpenAccess AccessOf(int amode) {
  if (amode & MPI_MODE_RDONLY) return OpenAccess::kReadOnly;
  if (amode & MPI_MODE_WRONLY) return OpenAccess::kWriteOnly;
  return OpenAccess::kReadWrite;
}

std::shared_ptr<OpenFile> Lookup(MPI_File handle) {
  Runtime* runtime = Runtime::Get();
  return runtime ? runtime->FindFile(handle) : nullptr;
}

Settings SettingsWithInfo(const OpenFile& file, const Settings& base, MPI_Info info) {
  std::vector<std::string> warnings;
  Settings settings = ApplyInfo(base, info, &warnings);
  for (const std::string& warning : warnings) WarnOnce(file.is_rank0(), warning);
  return settings;
}

void RegisterWithCache(Runtime& runtime, OpenFile& file) {
  // The registration keeps the node's segment mapped for as long as anyone still holds it.
  runtime.cache().RegisterFile(file.id, file.backend, file.backend->block_size(), file.node);
}

// The name of a file's node segments (NodeSegment::NameFor): a serial and a random number,
// the same on every rank of the file.
struct SegmentId {
  uint64_t serial = 0;
  uint64_t nonce = 0;
};

// A random number for SegmentId::nonce, below 2^62 so that it travels in an int64 agreement.
uint64_t RandomNonce() {
  thread_local std::mt19937_64 generator(std::random_device{}());
  return generator() >> 2;
}

// True if the ranks of `comm` are on more than one node. Local.
bool SpansNodes(Runtime& runtime, MPI_Comm comm) {
  const std::optional<std::vector<int>> nodes = runtime.node_map().NodesIn(comm);
  return nodes && std::adjacent_find(nodes->begin(), nodes->end(), std::not_equal_to<int>()) !=
                      nodes->end();
}

// Node-cache mode: the ranks of each node share one cache of the file's blocks in
// `block_size` frames, as large as their caches together, less each rank's transfer buffers.
// Local. The shared memory is made when a rank of the node first needs it (LazyNodeStore),
// or at once if `now`. False, with a warning, if this rank cannot use its node's segment; it
// then caches on its own (a mix keeps MPI's consistency: across nodes, ChooseNodeHomes then
// makes each rank home to its own blocks only, so that no block has two homes).
bool AttachNodeCache(Runtime& runtime, OpenFile& file, uint64_t block_size,
                     const NodeMates& mates, SegmentId id, bool now) {
  // The budget covers the rank's transfer buffers too: a block-sized one for the application
  // thread and each prefetch thread, and one for write-back. The frames get the rest.
  const uint64_t buffers = (runtime.settings().prefetch_threads + 2) * block_size;
  const uint64_t cache_size = file.settings.cache_size;
  const uint64_t frames_budget = cache_size > buffers ? cache_size - buffers : 0;
  NodeSegment::Place place;
  place.name = NodeSegment::NameFor(runtime.node_map().job_tag(), mates.leader_world_rank,
                                    id.serial, id.nonce);
  place.node_size = static_cast<int>(mates.comm_ranks.size());
  place.budget = runtime.node_budget();
  file.node = std::make_shared<LazyNodeStore>(
      place, block_size, frames_budget,
      "rank " + std::to_string(file.comm_rank) + " of " + file.path);
  return !now || file.node->MakeNow(mates.is_leader);
}

// A duplicate of a communicator for one file alone, made while the open does its other work:
// started (collective) with the open's agreement, and waited for only where the file first
// needs it. Each wait costs open tens of microseconds under MPICH's polling; one fewer is
// measurable when a job opens many small files.
//
// A file of one rank (IOR's file per process, MPI_COMM_SELF) gets MPI_COMM_SELF itself: a
// collective of one rank sends nothing and matches nothing, so stagio's cannot be mixed up
// with the application's, and the application never frees MPI_COMM_SELF. That saves the
// duplicate and its freeing, 6 µs of a 40 µs open and close here. The one thing the MPI
// standard still forbids, two threads in collectives on one communicator at once (two
// threads syncing two such files), is harmless at one rank in MPICH and Open MPI alike.
class PendingDuplicate {
 public:
  // Collective over `comm`, of `size` ranks.
  PendingDuplicate(MPI_Comm comm, int size) {
    if (size == 1) {
      duplicate_ = MPI_COMM_SELF;
    } else if (PMPI_Comm_idup(comm, &duplicate_, &request_) != MPI_SUCCESS) {
      request_ = MPI_REQUEST_NULL;
      duplicate_ = MPI_COMM_NULL;
    }
  }
  // Frees a duplicate nobody took (the open gave up on the file).
  ~PendingDuplicate() {
    MPI_Comm unused = Take();
    Release(&unused);
  }
  // Frees a communicator Take handed over.
  static void Release(MPI_Comm* taken) {
    if (*taken != MPI_COMM_NULL && *taken != MPI_COMM_SELF) PMPI_Comm_free(taken);
  }
  PendingDuplicate(const PendingDuplicate&) = delete;
  PendingDuplicate& operator=(const PendingDuplicate&) = delete;

  // Waits for the duplicate and hands it over (MPI_COMM_NULL if it could not be made, or was
  // taken already).
  MPI_Comm Take() {
    if (request_ != MPI_REQUEST_NULL) WaitWithoutSpinning(1, &request_);
    MPI_Comm taken = duplicate_;
    duplicate_ = MPI_COMM_NULL;
    return taken;
  }

 private:
  MPI_Comm duplicate_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// Until the file's own requests have timed its storage, the direct path takes the speed that
// the process's other files on its device found.
void ShareDeviceSpeed(Runtime& runtime, OpenFile& file) {
  const std::optional<uint64_t> device = file.backend->driver_file()->DeviceId();
  if (device) file.backend->storage_speed().ShareWith(runtime.device_speeds().For(*device));
}

// Collective: a segment id no rank of the file has used.
SegmentId AgreeOnSegmentId(Runtime& runtime, const OpenFile& file) {
  int64_t id[2] = {static_cast<int64_t>(runtime.next_segment_serial()),
                   static_cast<int64_t>(RandomNonce())};
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallreduce(MPI_IN_PLACE, id, 2, MPI_INT64_T, MPI_MAX, file.comm, request);
  });
  runtime.UseSegmentSerial(static_cast<uint64_t>(id[0]));
  return SegmentId{static_cast<uint64_t>(id[0]), static_cast<uint64_t>(id[1])};
}

// Flushes every tier of the file (remote owners, the cache, the I/O-node daemons) and returns
// the MPI error for this or any earlier write-back failure of the file (MPI_SUCCESS if none),
// logging the detail. What this returns success for has reached the backing file system.
int FlushForReport(Runtime& runtime, OpenFile& file, Callers callers) {
  Status status = file.tiers.Flush(callers);
  // Failures of earlier write-backs (and the cache's part of this one) were kept here.
  Status earlier = file.backend->TakeWriteBackError();
  if (!earlier.ok()) status = std::move(earlier);
  if (status.ok()) return MPI_SUCCESS;
  return ReportFailure(Status::IOError("write-back of " + file.path + " failed: " +
                                       status.message()),
                       runtime.write_back_error_code());
}

// Ends a call that did stagio's part and then PMPI's: PMPI has already raised its own error
// through the file's handler, so only stagio's error is raised here. Stagio's error wins.
int FinishAfterPmpi(MPI_File handle, int stagio_error, int pmpi_rc) {
  if (stagio_error != MPI_SUCCESS) return RaiseFileError(handle, stagio_error);
  return pmpi_rc;
}

// In a collective call of a collective-cache file, every rank's requests must have reached
// their owners before the owners change how blocks are cut. The call is collective, so a
// barrier is enough. Per-rank caching needs nothing. (Flushes get the same barrier from the
// file's remote-owners tier.)
void WaitForRequestsOnTheirWay(const OpenFile& file) {
  if (file.collective()) BarrierWithoutSpinning(file.comm);
}

// After a collective flush: each owner wrote back other ranks' bytes too, so a failure anywhere
// is every rank's failure. Returns this rank's error, or the write-back error code if only
// another rank's flush failed. A file no rank can write has nothing to write back; on the
// node cache it needs no agreement (the collective cache's owners still need the one at close,
// which tells them no request can come).
int AgreeOnFlushError(Runtime& runtime, const OpenFile& file, int error) {
  const bool read_only = (file.amode & MPI_MODE_RDONLY) != 0;
  if (!file.collective() && (!file.node_mode || read_only)) return error;
  int failed = error != MPI_SUCCESS ? 1 : 0;
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, file.comm, request);
  });
  if (failed && error == MPI_SUCCESS) {
    LogError("write-back of " + file.path + " failed at another rank that caches its blocks");
    return runtime.write_back_error_code();
  }
  return error;
}

// Collective: true if every rank of the file passed the same value.
bool SameOnEveryRank(const OpenFile& file, uint64_t value) {
  int64_t bounds[2] = {static_cast<int64_t>(value), -static_cast<int64_t>(value)};
  // At every set_view of a shared file: not spinning matters (polite_wait.h).
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallreduce(MPI_IN_PLACE, bounds, 2, MPI_INT64_T, MPI_MIN, file.comm, request);
  });
  return bounds[0] == -bounds[1];
}

// What the ranks of a newly opened file agreed on: the aggregators, as rank 0 chose them (the
// hints should agree; if they do not, one choice must still win), and whether any rank raised
// a flag.
struct AggregatorChoice {
  std::vector<int> aggregators;
  bool any_flag = false;
};

// One allreduce (MAX): rank 0 gives its aggregators (each + 1, so that the other ranks' zeros
// leave them alone), every rank its flag.
AggregatorChoice AgreeOnAggregators(const OpenFile& file, const std::string& spec,
                                    const std::vector<int>& node_of_rank, bool flag) {
  std::vector<int> message(static_cast<size_t>(file.comm_size) + 2, 0);
  if (file.is_rank0()) {
    std::vector<std::string> warnings;
    const std::vector<int> aggregators = ChooseAggregators(spec, node_of_rank, &warnings);
    for (const std::string& warning : warnings) WarnOnce(true, warning);
    message[0] = static_cast<int>(aggregators.size());
    for (size_t i = 0; i < aggregators.size(); ++i) message[i + 2] = aggregators[i] + 1;
  }
  message[1] = flag ? 1 : 0;
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallreduce(MPI_IN_PLACE, message.data(), static_cast<int>(message.size()),
                           MPI_INT, MPI_MAX, file.comm, request);
  });
  AggregatorChoice choice;
  for (int i = 0; i < message[0]; ++i) choice.aggregators.push_back(message[i + 2] - 1);
  choice.any_flag = message[1] != 0;
  return choice;
}

// The collective-cache mode of a newly opened file without the node cache: one owner per
// block, dealt over the aggregators.
BlockOwners ChooseOwners(const OpenFile& file) {
  return BlockOwners(
      AgreeOnAggregators(file, file.settings.aggregators, NodeOfEachRank(file.comm), false)
          .aggregators);
}

// The owners of a node-cached file after some rank could not attach to its node's table: a
// node-mate's block is no longer in every rank's cache, so each rank is home to its own blocks
// only and node-mates ask each other as other nodes do.
BlockOwners WithoutSharedNodes(const OpenFile& file, std::vector<int> aggregators) {
  WarnOnce(file.is_rank0(), "a rank of " + file.path + " caches on its own (see above), so "
                            "its node-mates ask for each other's blocks as other nodes do");
  return BlockOwners(std::move(aggregators));
}

// Collective: true if every rank of the file is attached to its node's table.
bool EveryRankAttached(const OpenFile& file) {
  int attached = file.node_cached() ? 1 : 0;
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallreduce(MPI_IN_PLACE, &attached, 1, MPI_INT, MPI_MIN, file.comm, request);
  });
  return attached == 1;
}

// The homes of a node-cached file's blocks when its ranks span several nodes (none when they
// are on one): each block is dealt to one node, whose ranks share it in their table, and
// ranks of other nodes ask its owner. By default every rank of a node owns and serves a share
// of its node's blocks, so that a node answers as many requests at once as it has ranks,
// and a node's share of the blocks is its share of the ranks, as its table's size is.
BlockOwners ChooseNodeHomes(Runtime& runtime, const OpenFile& file) {
  const std::optional<std::vector<int>> nodes = runtime.node_map().NodesIn(file.comm);
  if (!nodes) return BlockOwners();
  std::vector<int> distinct = *nodes;
  std::sort(distinct.begin(), distinct.end());
  if (std::unique(distinct.begin(), distinct.end()) - distinct.begin() < 2) return BlockOwners();
  const std::string spec = file.settings.aggregators == "auto"
                               ? std::to_string(file.comm_size)
                               : file.settings.aggregators;
  // A block counts as local to all of its node's ranks only if they all share the table.
  AggregatorChoice choice = AgreeOnAggregators(file, spec, *nodes, !file.node_cached());
  if (choice.any_flag) return WithoutSharedNodes(file, std::move(choice.aggregators));
  return BlockOwners(std::move(choice.aggregators), *nodes);
}

// New hints at set_view or set_info: a new block size means re-registering the file's blocks.
int ApplyFileSettings(Runtime& runtime, OpenFile& file, Settings settings) {
  int error = MPI_SUCCESS;
  if ((file.collective() || file.node_mode) && !SameOnEveryRank(file, settings.block_size)) {
    // Blocks are dealt to owners by index: ranks that cut the file differently would each
    // think another holds a block.
    WarnOnce(file.is_rank0(), "the ranks of " + file.path + " asked for different "
                              "stagio_block_size values; it keeps " +
                              FormatSetting(file.settings, "stagio_block_size"));
    settings.block_size = file.settings.block_size;
  }
  const bool reblock = settings.block_size != file.settings.block_size;
  const bool stop_caching = file.settings.cache_enabled && !settings.cache_enabled;
  if (reblock || stop_caching) {
    error = FlushForReport(runtime, file, Callers::kEveryRank);
    // The node's table goes with the old blocks: no rank attaches to it only to drop it.
    if (reblock && file.node) file.node->Closing();
    InvalidateTiers(file, Callers::kEveryRank, Staleness::kHandleReleased);
  }
  if (reblock) {
    runtime.cache().UnregisterFile(file.id);
    file.backend->set_block_size(settings.block_size);
    if (file.node_mode) {
      // The frames have the block size: a new one needs a new table. Every rank of the node
      // flushed above; none may still use the old table when it goes.
      BarrierWithoutSpinning(file.comm);
      file.node.reset();
      const SegmentId id = AgreeOnSegmentId(runtime, file);
      std::optional<NodeMates> mates = runtime.node_map().MatesIn(file.comm);
      if (mates) {
        AttachNodeCache(runtime, file, settings.block_size, *mates, id,
                        SpansNodes(runtime, file.comm));
      }
      if (file.owners.shares_nodes() && !EveryRankAttached(file)) {
        file.owners = WithoutSharedNodes(file, file.owners.aggregators());
      }
    }
    RegisterWithCache(runtime, file);
    BuildTiers(runtime, file);
  }
  // Requests cut into the new blocks must not reach an owner still on the old ones.
  if (reblock) WaitForRequestsOnTheirWay(file);
  file.settings = settings;
  file.backend->prefetcher().Configure(PrefetchConfigOf(settings));
  file.backend->collective_prefetcher().Configure(PrefetchConfigOf(settings));
  runtime.ApplyProcessSettings(settings);
  return error;
}

}  // namespace

int ThreadLevelToRequest(int required) {
  std::vector<std::string> ignored;  // Runtime::Start reports them once MPI runs
  const Settings settings = LoadProcessSettings(ProcessEnvironment(), &ignored);
  // The collective cache's server thread and pre-execution helpers call MPI.
  const bool threads_call_mpi = settings.collective_cache || settings.preexec != "off";
  if (settings.disable || !threads_call_mpi) return required;
  return std::max(required, static_cast<int>(MPI_THREAD_MULTIPLE));
}

void AfterInit(int /*required*/, int* provided) {
  // *provided is left as MPI set it: at least what the application asked for, since stagio's
  // request was never lower.
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  Runtime::Start(world_rank, *provided);
}

void BeforeFinalize() { Runtime::Stop(); }

int Open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* handle) {
  Runtime* runtime = Runtime::Get();
  InsideCall inside_call(runtime);
  int rc = PMPI_File_open(comm, filename, amode, info, handle);
  // Sequential-mode files have no explicit offsets and no individual pointer to model:
  // they stay PMPI's entirely.
  if (rc != MPI_SUCCESS || !runtime || (amode & MPI_MODE_SEQUENTIAL)) return rc;

  auto file = std::make_shared<OpenFile>();
  file->handle = *handle;
  file->path = filename;
  file->amode = amode;
  PMPI_Comm_rank(comm, &file->comm_rank);
  PMPI_Comm_size(comm, &file->comm_size);
  file->settings = SettingsWithInfo(*file, runtime->settings(), info);
  runtime->ApplyProcessSettings(file->settings);

  std::unique_ptr<DriverFile> driver_file;
  Status status = runtime->driver()->Open(StoragePathOf(filename), AccessOf(amode), &driver_file);
  // All ranks must agree: the collective calls below, and later set_size and preallocate,
  // need every rank of the file to take the same path. The collective cache also needs every
  // rank to want it and to cut the file into the same blocks.
  const bool wants_collective = runtime->block_server() && file->comm_size > 1 &&
                                file->settings.collective_cache && !file->passthrough();
  // One cache per node needs no MPI thread level: no thread of stagio serves another rank.
  // Its node-mates come from the map learnt at MPI_Init, with no collective.
  std::optional<NodeMates> mates;
  if (file->comm_size > 1 && file->settings.node_cache && !file->passthrough()) {
    mates = runtime->node_map().MatesIn(comm);
  }
  const int64_t block_size = static_cast<int64_t>(file->settings.block_size);
  // The last two fields name the node segments (SegmentId): negated under MIN, the largest of
  // the ranks' next unused serials, and one rank's random number.
  int64_t agreement[7] = {status.ok() ? 1 : 0, wants_collective ? 1 : 0, block_size, -block_size,
                          mates ? 1 : 0, -static_cast<int64_t>(runtime->next_segment_serial()),
                          static_cast<int64_t>(RandomNonce())};
  // stagio's collectives for the file go on a duplicate of its communicator of the file's own.
  // Not one shared by the communicator's files: the application may free its communicator
  // while files opened on it stay open, and threads may make collective calls on two files
  // of one communicator at once. It is made while the agreement and the node cache's
  // attachment go on.
  PendingDuplicate duplicate(comm, file->comm_size);
  // Open's collectives wait without spinning (polite_wait.h): under MPICH, with more ranks
  // than cores, a spinning rank delays the ones it waits for.
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallreduce(MPI_IN_PLACE, agreement, 7, MPI_INT64_T, MPI_MIN, comm, request);
  });
  const bool opened_everywhere = agreement[0] == 1;
  const bool same_blocks = agreement[2] == -agreement[3];
  if ((agreement[1] == 1 || agreement[4] == 1) && !same_blocks) {
    WarnOnce(file->is_rank0(), "the ranks opening " + std::string(filename) +
                                   " set different stagio_block_size values; each caches its "
                                   "own blocks instead of sharing one cache");
  }
  if (!opened_everywhere) {
    // A file stagio cannot reach through its driver is still a good MPI file: leave it to PMPI.
    WarnOnce(file->is_rank0(), "cannot open " + std::string(filename) +
                                   " through the storage driver on every rank (rank 0: " +
                                   status.ToString() + "); this file bypasses stagio");
    return MPI_SUCCESS;
  }
  // The node cache first: where it works, the node is the unit of caching and no rank's
  // thread serves the others; the collective cache is what remains when it is off.
  file->node_mode = agreement[4] == 1 && same_blocks;
  if (file->node_mode) {
    const SegmentId id{static_cast<uint64_t>(-agreement[5]),
                       static_cast<uint64_t>(agreement[6])};
    runtime->UseSegmentSerial(id.serial);
    // Across nodes, whether every rank shares its node's table decides the blocks' homes
    // (ChooseNodeHomes): the table is made now. On one node, when a rank first needs it.
    AttachNodeCache(*runtime, *file, file->settings.block_size, *mates, id,
                    SpansNodes(*runtime, comm));
  }
  file->comm = duplicate.Take();
  // The collective cache: one owner per block; on the node cache, one home node per block.
  if (agreement[1] == 1 && same_blocks) {
    file->owners = file->node_mode ? ChooseNodeHomes(*runtime, *file) : ChooseOwners(*file);
  }
  file->id = runtime->NextFileId();
  file->backend =
      std::make_shared<FileBackend>(std::move(driver_file), PrefetchConfigOf(file->settings));
  // Every rank must give the I/O-node tier the same layout, so that each block has one home
  // daemon: the smallest block size any rank asked for, over this file's aggregators.
  file->backend->driver_file()->SetBlockLayout(
      static_cast<uint64_t>(agreement[2]),
      file->collective() ? file->owners.aggregators().size()
                         : static_cast<uint64_t>(file->comm_size));
  file->backend->RefreshKnownSize();
  ShareDeviceSpeed(*runtime, *file);
  BuildTiers(*runtime, *file);
  // MPI_MODE_APPEND starts the pointers at the end of the file; ask PMPI where it put them.
  PMPI_File_get_position(*handle, &file->individual_pointer);
  RegisterWithCache(*runtime, *file);
  if (file->collective()) {
    runtime->block_server()->Serve(file->comm, file->id, file->backend);
    const uint64_t aggregators = file->owners.aggregators().size();
    // An aggregator caches for the ranks it serves; on the node cache, the node's table does.
    if (!file->node_mode && file->owners.IsAggregator(file->comm_rank)) {
      runtime->PoolCacheOfRanks((static_cast<uint64_t>(file->comm_size) + aggregators - 1) /
                                aggregators);
    }
  }
  runtime->AddFile(file);
  runtime->preexec().OnMainOpen(file);
  return MPI_SUCCESS;
}

int Close(MPI_File* handle) {
  Runtime* runtime = Runtime::Get();
  std::shared_ptr<OpenFile> file = runtime ? runtime->TakeFile(*handle) : nullptr;
  if (!file) return PMPI_File_close(handle);
  InsideCall inside_call(runtime);
  // Helpers stop using the file (and its communicator, freed below).
  file->progress->MarkClosed();
  // This rank's hints must have been taken by their owners before the flush's barrier.
  if (file->collective()) file->prefetch_hints.WaitAll();
  // Close promises the bytes reached the file system, not the disk (that is sync's job, as in
  // ROMIO), so no fsync here.
  const int error =
      AgreeOnFlushError(*runtime, *file, FlushForReport(*runtime, *file, Callers::kEveryRank));
  // Every rank is here (the agreement above), so no request for this file can come.
  if (file->collective()) runtime->block_server()->Forget(file->comm);
  if (file->node) file->node->Closing();
  InvalidateTiers(*file, Callers::kEveryRank, Staleness::kHandleReleased);
  runtime->cache().UnregisterFile(file->id);
  // The rank that made the node's segment removes its name. A writable file's node-mates are
  // all in close (the flush agreement above): none attaches again. A node-mate of a read-only
  // file may still be reading: if it first needs the table after this, it makes one of its
  // own, which holds nothing stale since nobody writes the file.
  file->node.reset();
  runtime->job_stats().AddClosedFile(file->path, *file->backend->stats());
  // The handler runs while the handle is still valid, as ROMIO does for a failing close.
  RaiseFileError(*handle, error);
  PendingDuplicate::Release(&file->comm);
  const int rc = PMPI_File_close(handle);
  return error != MPI_SUCCESS ? error : rc;
}

int Sync(MPI_File handle) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  if (!file) return PMPI_File_sync(handle);
  Runtime& runtime = *Runtime::Get();
  InsideCall inside_call(&runtime);
  SequencedCall sequenced(*file->progress);
  int error = FlushForReport(runtime, *file, Callers::kEveryRank);
  if (error == MPI_SUCCESS) {
    Status status = file->backend->driver_file()->Sync();
    if (!status.ok()) error = ReportFailure(status, MPI_ERR_IO);
  }
  error = AgreeOnFlushError(runtime, *file, error);
  // Every owner wrote back what it held of every rank's writes.
  if (error == MPI_SUCCESS) file->wrote_to_owners.store(false);
  const int rc = PMPI_File_sync(handle);
  // Dropping clean blocks is what makes sync-barrier-sync show other ranks' writes: the next
  // read of this file goes to storage.
  InvalidateTiers(*file, Callers::kEveryRank, Staleness::kPeersWrote);
  file->backend->RefreshKnownSize();
  return FinishAfterPmpi(handle, error, rc);
}

int SetSize(MPI_File handle, MPI_Offset size) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  if (!file) return PMPI_File_set_size(handle, size);
  Runtime& runtime = *Runtime::Get();
  InsideCall inside_call(&runtime);
  SequencedCall sequenced(*file->progress);
  int error = FlushForReport(runtime, *file, Callers::kEveryRank);
  // Every rank's bytes must be on storage before any rank truncates, or a late write-back would
  // grow the file again.
  BarrierWithoutSpinning(file->comm);
  const int rc = PMPI_File_set_size(handle, size);
  InvalidateTiers(*file, Callers::kEveryRank, Staleness::kStorageChanged);
  if (rc == MPI_SUCCESS) file->backend->ResetKnownSize(static_cast<uint64_t>(size));
  return FinishAfterPmpi(handle, error, rc);
}

namespace {

// MPI_File_preallocate's visible effect, made with MPI_File_set_size (mpi_quirks.h): the file
// grows to `size` if it is smaller, and is left alone otherwise. Storage holds everyone's bytes
// (the caller flushed, and all ranks passed a barrier); the ranks agree on its size, so that all
// make the same collective call or none.
int GrowTo(OpenFile& file, MPI_Offset size) {
  if (size < 0) return PMPI_File_preallocate(file.handle, size);  // MPI's own error for it
  uint64_t stored = 0;
  const Status status = file.backend->driver_file()->GetSize(&stored);
  MPI_Offset current = status.ok() ? static_cast<MPI_Offset>(stored) : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &current, 1, MPI_OFFSET, MPI_MAX, file.comm);
  return current >= size ? MPI_SUCCESS : PMPI_File_set_size(file.handle, size);
}

}  // namespace

int Preallocate(MPI_File handle, MPI_Offset size) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  if (!file) return PMPI_File_preallocate(handle, size);
  Runtime& runtime = *Runtime::Get();
  InsideCall inside_call(&runtime);
  // Preallocation may rewrite existing bytes with what storage holds, so storage must hold
  // everyone's latest bytes first, and nothing stale may stay cached after.
  int error = FlushForReport(runtime, *file, Callers::kEveryRank);
  BarrierWithoutSpinning(file->comm);
  const int rc = kPreallocateBySetSize ? GrowTo(*file, size) : PMPI_File_preallocate(handle, size);
  // MPI may return on some ranks while another still changes the file (OMPIO's preallocate
  // did, with the file briefly larger than asked): the size is read only once every rank is
  // out of the call.
  BarrierWithoutSpinning(file->comm);
  InvalidateTiers(*file, Callers::kEveryRank, Staleness::kStorageChanged);
  file->backend->RefreshKnownSize();
  return FinishAfterPmpi(handle, error, rc);
}

int GetSize(MPI_File handle, MPI_Offset* size) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  if (!file) return PMPI_File_get_size(handle, size);
  // Storage may not hold this rank's newest bytes yet; the known size includes them.
  file->backend->RefreshKnownSize();
  *size = static_cast<MPI_Offset>(file->backend->known_size());
  return MPI_SUCCESS;
}

int SetView(MPI_File handle, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
            const char* datarep, MPI_Info info) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  InsideCall inside_call(Runtime::Get());  // these may wait for storage (a flush)
  // PMPI validates the arguments and keeps its own copy of the view for the calls it serves.
  const int rc = PMPI_File_set_view(handle, disp, etype, filetype, datarep, info);
  if (!file || rc != MPI_SUCCESS) return rc;
  Runtime& runtime = *Runtime::Get();
  const bool native = datarep && std::strcmp(datarep, "native") == 0;
  int error = MPI_SUCCESS;
  if (!native && file->native) {
    error = FlushForReport(runtime, *file, Callers::kEveryRank);
    InvalidateTiers(*file, Callers::kEveryRank, Staleness::kPeersWrote);
  }
  file->native = native;
  file->view = FileView(disp, etype, filetype);
  file->individual_pointer = 0;
  const int settings_error = ApplyFileSettings(runtime, *file, SettingsWithInfo(*file, file->settings, info));
  if (error == MPI_SUCCESS) error = settings_error;
  PrefetchAfterSetView(runtime, *file);
  return RaiseFileError(handle, error);
}

int SetInfo(MPI_File handle, MPI_Info info) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  InsideCall inside_call(Runtime::Get());  // these may wait for storage (a flush)
  const int rc = PMPI_File_set_info(handle, info);
  if (!file || rc != MPI_SUCCESS) return rc;
  Runtime& runtime = *Runtime::Get();
  return RaiseFileError(handle,
                        ApplyFileSettings(runtime, *file, SettingsWithInfo(*file, file->settings, info)));
}

int GetInfo(MPI_File handle, MPI_Info* info_used) {
  const int rc = PMPI_File_get_info(handle, info_used);
  std::shared_ptr<OpenFile> file = Lookup(handle);
  if (!file || rc != MPI_SUCCESS) return rc;
  // ROMIO keeps only the hints it knows, but OMPIO returns every hint it was given, stagio's
  // among them, as given. stagio's are replaced by the values in force, and left out where
  // none is.
  const Settings& process = Runtime::Get()->settings();
  for (const std::string& key : KnownHintKeys()) {
    int present = 0, length = 0;
    PMPI_Info_get_valuelen(*info_used, key.c_str(), &length, &present);
    if (present) PMPI_Info_delete(*info_used, key.c_str());
    std::string value = ScopeOfSetting(key) == SettingScope::kFile
                            ? FormatSetting(file->settings, key)
                            : FormatSetting(process, key);
    // What the file really does, which may be less than was asked for.
    if (key == "stagio_collective_cache") value = file->collective() ? "enable" : "disable";
    if (key == "stagio_node_cache") value = file->node_cached() ? "enable" : "disable";
    if (key == "stagio_aggregators") {
      value = file->collective() ? FormatAggregatorRanks(file->owners.aggregators()) : "";
    }
    // Unset settings are left out: MPI (Open MPI among them) may refuse an empty value.
    if (value.empty()) continue;
    PMPI_Info_set(*info_used, key.c_str(), value.c_str());
  }
  return MPI_SUCCESS;
}

int SetAtomicity(MPI_File handle, int flag) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  InsideCall inside_call(Runtime::Get());  // these may wait for storage (a flush)
  if (!file) return PMPI_File_set_atomicity(handle, flag);
  Runtime& runtime = *Runtime::Get();
  // From here on PMPI serves this file (or stops doing so): nothing cached may be newer or
  // older than what it sees.
  int error = FlushForReport(runtime, *file, Callers::kEveryRank);
  InvalidateTiers(*file, Callers::kEveryRank, Staleness::kPeersWrote);
  const int rc = PMPI_File_set_atomicity(handle, flag);
  if (rc == MPI_SUCCESS) file->atomic = flag != 0;
  return FinishAfterPmpi(handle, error, rc);
}

namespace {

// A seek that cannot be made (bad whence, negative position), asked of MPI in a form that
// does not depend on MPI's individual pointer (stagio keeps its own): the error class is the
// MPI library's own (ROMIO and OMPIO differ), and MPI calls the file's error handler once, as
// it would without stagio. MPI moves no pointer when it refuses.
int RejectSeek(MPI_File handle, MPI_Offset offset, int whence) {
  const int rc = PMPI_File_seek(handle, offset, whence);
  return rc != MPI_SUCCESS ? rc : RaiseFileError(handle, MPI_ERR_ARG);
}

}  // namespace

int Seek(MPI_File handle, MPI_Offset offset, int whence) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  InsideCall inside_call(Runtime::Get());  // these may wait for storage (a flush)
  if (!file) return PMPI_File_seek(handle, offset, whence);
  if (whence == MPI_SEEK_END) {
    // The end of file in etypes of the view is PMPI's to compute; it needs storage to hold
    // this rank's bytes first, wherever they are cached.
    const int error = FlushForReport(*Runtime::Get(), *file, Callers::kThisRank);
    if (error != MPI_SUCCESS) return RaiseFileError(handle, error);
    const int rc = PMPI_File_seek(handle, offset, whence);
    if (rc == MPI_SUCCESS) PMPI_File_get_position(handle, &file->individual_pointer);
    return rc;
  }
  MPI_Offset target = offset;
  if (whence == MPI_SEEK_CUR) {
    target += file->individual_pointer;
  } else if (whence != MPI_SEEK_SET) {
    return RejectSeek(handle, 0, whence);
  }
  if (target < 0) return RejectSeek(handle, target, MPI_SEEK_SET);
  file->individual_pointer = target;
  return MPI_SUCCESS;
}

int SeekShared(MPI_File handle, MPI_Offset offset, int whence) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  if (!file || whence != MPI_SEEK_END) return PMPI_File_seek_shared(handle, offset, whence);
  // The end of file is the end over every rank's writes, and MPI computes it from storage: each
  // rank writes back what it holds, and the barrier keeps MPI from looking before all have.
  // The call is collective, so every rank passes through here.
  const int error = FlushForReport(*Runtime::Get(), *file, Callers::kEveryRank);
  BarrierWithoutSpinning(file->comm);
  const int rc = PMPI_File_seek_shared(handle, offset, whence);
  return FinishAfterPmpi(handle, error, rc);
}

int GetPosition(MPI_File handle, MPI_Offset* offset) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  if (!file) return PMPI_File_get_position(handle, offset);
  *offset = file->individual_pointer;
  return MPI_SUCCESS;
}

int GetByteOffset(MPI_File handle, MPI_Offset offset, MPI_Offset* disp) {
  std::shared_ptr<OpenFile> file = Lookup(handle);
  // PMPI knows the same view, and what to make of a negative offset (ROMIO accepts it).
  if (!file || offset < 0) return PMPI_File_get_byte_offset(handle, offset, disp);
  *disp = file->view.ByteOffsetOfStream(static_cast<uint64_t>(offset) * file->view.etype_size());
  return MPI_SUCCESS;
}

}  // namespace stagio::engine
