#include "preexec/preexec_helper.h"

#include <algorithm>
#include <map>

#include "common/log.h"
#include "mpiio/data_path.h"
#include "mpiio/argument_checks.h"
#include "mpiio/runtime.h"
#include "mpiio/sieve.h"
#include "preexec/helper_fetch.h"

namespace stagio {

namespace {

thread_local HelperRun* t_current_run = nullptr;

// The blocks the extents touch, ascending, each once.
std::vector<uint64_t> BlocksOf(const std::vector<Extent>& extents, uint64_t block_size) {
  std::vector<uint64_t> blocks;
  for (const Extent& extent : extents) {
    if (extent.length == 0) continue;
    const uint64_t first = static_cast<uint64_t>(extent.offset) / block_size;
    const uint64_t last = (static_cast<uint64_t>(extent.offset) + extent.length - 1) / block_size;
    for (uint64_t index = first; index <= last; ++index) {
      if (blocks.empty() || blocks.back() < index) blocks.push_back(index);
    }
  }
  return blocks;
}

}  // namespace

HelperRun::HelperRun(Runtime& runtime, IoPriorityGate* gate, Slice slice, void* arg)
    : runtime_(runtime),
      gate_(gate),
      slice_(slice),
      arg_(arg),
      budget_(runtime.cache().capacity() / 2) {}

HelperRun::~HelperRun() { Join(); }

HelperRun* HelperRun::Current() { return t_current_run; }

HelperRun::Mode HelperRun::ModeOf(const OpenFile& file) {
  return Mode{file.settings.preexec != "off" && !file.passthrough(),
              file.settings.preexec == "ppis"};
}

void HelperRun::Bind(const std::shared_ptr<OpenFile>& file) {
  Take(file, ModeOf(*file), file->view, file->individual_pointer, file->progress->begun());
}

void HelperRun::Take(const std::shared_ptr<OpenFile>& file, Mode mode, FileView view,
                     int64_t pointer, uint64_t last_begun) {
  HelperFile helper_file{HelperClaim(file, mode.enabled),
                         HelperSequence(file->progress, last_begun),
                         std::move(view),
                         PrefetchPointer(pointer),
                         DirtyRangeTable(),
                         mode.enabled,
                         mode.ppis};
  // A handle the helper still holds is a file closed since and its handle reused: replaced.
  files_.erase(file->handle);
  files_.emplace(file->handle, std::move(helper_file));
  std::lock_guard<std::mutex> lock(opens_mutex_);
  waited_on_.push_back(file->progress);
}

void HelperRun::Start() {
  thread_ = std::thread([this] { Run(); });
}

void HelperRun::Run() {
  t_current_run = this;
  slice_(arg_);
  t_current_run = nullptr;
}

void HelperRun::Join() {
  if (!thread_.joinable()) return;
  cancelled_.store(true);
  if (gate_) gate_->Wake();
  {
    std::lock_guard<std::mutex> lock(opens_mutex_);
    opened_.notify_all();
    for (const auto& progress : waited_on_) progress->Wake();
  }
  thread_.join();
  files_.clear();  // the files' own prefetching resumes
}

void HelperRun::OnMainOpen(const std::shared_ptr<OpenFile>& file) {
  std::lock_guard<std::mutex> lock(opens_mutex_);
  opens_[file->path].push_back(MainOpen{file, ModeOf(*file)});
  opened_.notify_all();
}

HelperRun::HelperFile* HelperRun::Find(MPI_File handle) {
  auto it = files_.find(handle);
  if (it == files_.end()) {
    const bool late = handle == MPI_FILE_NULL && opened_too_late_;
    unattributed_.Add(late ? Counter::preexec_skipped_lagging : Counter::preexec_dropped, 1);
    return nullptr;
  }
  return &it->second;
}

void HelperRun::Open(const char* path, MPI_File* handle) {
  if (!handle) return;
  *handle = MPI_FILE_NULL;
  if (!path) return;
  const size_t wanted = ++opens_taken_[path];
  std::shared_ptr<OpenFile> file;
  Mode mode{};
  {
    std::unique_lock<std::mutex> lock(opens_mutex_);
    opened_.wait(lock, [&] { return cancelled_.load() || opens_[path].size() >= wanted; });
    if (cancelled_.load()) {
      opened_too_late_ = true;
      return;
    }
    file = opens_[path][wanted - 1].file.lock();
    mode = opens_[path][wanted - 1].mode;
  }
  // Gone: the main thread has closed it again, and the helper's calls for it are all late.
  if (!file || file->progress->closed()) {
    opened_too_late_ = true;
    return;
  }
  // Taken at its open: the helper's first call stands for the main thread's first.
  Take(file, mode, FileView(), 0, 0);
  *handle = file->handle;
}

void HelperRun::Close(MPI_File* handle) {
  if (!handle) return;
  auto it = files_.find(*handle);
  if (it != files_.end()) {
    it->second.sequence.main().WaitUntilClosed(cancelled_);
    files_.erase(it);
  }
  *handle = MPI_FILE_NULL;
}

void HelperRun::SyncPoint(MPI_File handle) {
  HelperFile* file = Find(handle);
  if (!file || cancelled_.load()) return;
  file->stats().Add(Counter::preexec_calls, 1);
  const uint64_t sequence = file->sequence.Next();
  MainThreadProgress& main = file->sequence.main();
  main.WaitUntilFinished(sequence, cancelled_);
  file->dirty.ReleaseThrough(main.finished());
}

void HelperRun::SetView(MPI_File handle, MPI_Offset displacement, MPI_Datatype etype,
                        MPI_Datatype filetype, const char* datarep) {
  HelperFile* file = Find(handle);
  if (!file) return;
  // The helper cannot know what another representation moves, and a datatype MPI would
  // reject (null, invalid, freed, uncommitted) must not reach the flattening; such a view
  // makes the file's later calls fetch nothing.
  const DatatypeChecker& checker = runtime_.datatype_checker();
  int etype_size = 0;
  const bool valid = displacement >= 0 && datarep && std::string(datarep) == "native" &&
                     checker.Check(etype) == MPI_SUCCESS &&
                     checker.Check(filetype) == MPI_SUCCESS &&
                     PMPI_Type_size(etype, &etype_size) == MPI_SUCCESS && etype_size > 0;
  if (!valid) {
    file->stats().Add(Counter::preexec_dropped, 1);
    file->enabled = false;
    return;
  }
  file->view = FileView(displacement, etype, filetype);
  file->pointer = PrefetchPointer(0);
}

void HelperRun::Seek(MPI_File handle, MPI_Offset offset, int whence) {
  HelperFile* file = Find(handle);
  if (!file) return;
  bool moved = false;
  if (whence == MPI_SEEK_SET) {
    moved = file->pointer.Seek(offset, PrefetchPointer::From::kStart);
  } else if (whence == MPI_SEEK_CUR) {
    moved = file->pointer.Seek(offset, PrefetchPointer::From::kCurrent);
  } else if (whence == MPI_SEEK_END && file->view.is_contiguous()) {
    // Only a contiguous view maps the end of file to an etype offset without asking MPI.
    const int64_t bytes = static_cast<int64_t>(file->file->backend->known_size()) -
                          file->view.displacement();
    const int64_t end = std::max<int64_t>(0, bytes) /
                        static_cast<int64_t>(file->view.etype_size());
    moved = file->pointer.Seek(offset, PrefetchPointer::From::kEnd, end);
  }
  if (!moved) file->stats().Add(Counter::preexec_dropped, 1);
}

bool HelperRun::Locate(HelperFile& file, std::optional<MPI_Offset> offset, MPI_Count count,
                       MPI_Datatype datatype, uint64_t* sequence, std::vector<Extent>* extents) {
  file.stats().Add(Counter::preexec_calls, 1);
  // Numbered and moving the pointer even when dropped: the call still happens in the main
  // thread, so the helper's later calls must keep standing for the right ones.
  *sequence = file.sequence.Next();
  // The main thread's call will fail on what fails here; the helper drops it silently.
  uint64_t bytes = 0;
  if (count < 0 || runtime_.datatype_checker().Check(datatype) != MPI_SUCCESS ||
      CheckTransferSize(count, datatype, &bytes) != MPI_SUCCESS) {
    file.stats().Add(Counter::preexec_dropped, 1);
    return false;
  }
  const uint64_t etype = file.view.etype_size();
  const int64_t etypes = static_cast<int64_t>(bytes / etype);
  const int64_t position = offset ? *offset : file.pointer.Advance(etypes);
  uint64_t stream_end = 0;
  if (position < 0 || bytes % etype != 0 || !file.enabled ||
      !StreamEnd(position, etype, bytes, &stream_end) || !file.view.CanMap(stream_end)) {
    if (file.enabled) file.stats().Add(Counter::preexec_dropped, 1);
    return false;
  }
  MapForHelper(file.view, static_cast<uint64_t>(position) * etype, bytes, extents);
  return true;
}

void HelperRun::MapForHelper(const FileView& view, uint64_t stream_begin, uint64_t bytes,
                             std::vector<Extent>* extents) const {
  // A call's file extents, but no more than the helper can use: the first run-ahead budget's
  // worth of its bytes, which is all the cache keeps for it (a larger call's later bytes are
  // neither fetched nor, for a write, recorded: that costs fetches, never bytes). A huge count
  // through a fine-grained view so costs no more than that.
  constexpr uint64_t kPiece = 1ull << 20;
  const uint64_t limit = std::min(bytes, std::max<uint64_t>(budget_.limit_bytes(), kPiece));
  extents->clear();
  for (uint64_t mapped = 0; mapped < limit;) {
    const uint64_t piece = std::min(kPiece, limit - mapped);
    view.MapStreamRange(stream_begin + mapped, piece, extents);
    mapped += piece;
  }
}

void HelperRun::Write(MPI_File handle, std::optional<MPI_Offset> offset, MPI_Count count,
                      MPI_Datatype datatype) {
  HelperFile* file = Find(handle);
  if (!file || cancelled_.load()) return;
  uint64_t sequence = 0;
  std::vector<Extent> extents;
  if (!Locate(*file, offset, count, datatype, &sequence, &extents)) return;
  const uint64_t finished = file->sequence.main().finished();
  file->dirty.ReleaseThrough(finished);
  if (finished >= sequence) return;  // the main thread has made the write already
  for (const Extent& extent : extents) {
    const uint64_t begin = static_cast<uint64_t>(extent.offset);
    file->dirty.Record(begin, begin + extent.length, sequence);
  }
}

void HelperRun::Read(MPI_File handle, std::optional<MPI_Offset> offset, MPI_Count count,
                     MPI_Datatype datatype) {
  HelperFile* file = Find(handle);
  if (!file || cancelled_.load()) return;
  uint64_t sequence = 0;
  std::vector<Extent> extents;
  if (!Locate(*file, offset, count, datatype, &sequence, &extents)) return;
  if (file->sequence.Behind(sequence)) {
    file->stats().Add(Counter::preexec_skipped_lagging, 1);
    return;
  }
  CutAtEndOfFile(file->file->backend->known_size(), &extents);
  if (extents.empty()) return;
  if (!WaitForWritesBefore(*file, extents)) return;
  // The end of file may have moved with the writes waited for.
  CutAtEndOfFile(file->file->backend->known_size(), &extents);
  Fetch(*file, sequence, extents);
}

bool HelperRun::WaitForWritesBefore(HelperFile& file, const std::vector<Extent>& extents) {
  MainThreadProgress& main = file.sequence.main();
  file.dirty.ReleaseThrough(main.finished());
  uint64_t newest = 0;
  for (const Extent& extent : extents) {
    const uint64_t begin = static_cast<uint64_t>(extent.offset);
    newest = std::max(newest, file.dirty.NewestWriteOverlapping(begin, begin + extent.length));
  }
  if (newest == 0) return true;
  file.stats().Add(Counter::preexec_dirty_waits, 1);
  if (!main.WaitUntilFinished(newest, cancelled_)) return false;
  file.dirty.ReleaseThrough(main.finished());
  return true;
}

void HelperRun::WaitForBudget(uint64_t bytes, FileStats& stats) {
  budget_.ReleaseConsumed();
  bool counted = false;
  while (const RunAheadBudget::Announcement* oldest = budget_.MustWaitFor(bytes)) {
    if (!counted) stats.Add(Counter::preexec_budget_waits, 1);
    counted = true;
    // Copied: ReleaseConsumed may drop the entry the pointer points to.
    const std::shared_ptr<MainThreadProgress> main = oldest->main;
    main->WaitUntilFinished(oldest->sequence, cancelled_);
    if (cancelled_.load()) return;
    budget_.ReleaseConsumed();
  }
}

void HelperRun::Fetch(HelperFile& file, uint64_t sequence, const std::vector<Extent>& extents) {
  BlockCache& cache = runtime_.cache();
  const OpenFile& open_file = *file.file;
  const uint64_t block_size = cache.BlockSizeOf(open_file.id);
  if (block_size == 0) return;  // closed meanwhile
  const std::vector<uint64_t> blocks = BlocksOf(extents, block_size);
  // The cache charges whole blocks, whatever part of them is fetched.
  WaitForBudget(blocks.size() * block_size, file.stats());
  if (cancelled_.load() || file.sequence.Behind(sequence)) return;

  // Per-rank caching: the exact bytes, sieved as the main thread's read will sieve them.
  // Collective cache: this rank's blocks whole (two-phase I/O fetches whole blocks, so a
  // partial one would be fetched again) and other owners' blocks asked of them as hints.
  std::vector<ByteSpan> own;
  std::map<int, std::vector<uint64_t>> remote;
  if (!open_file.collective()) {
    ForEachSievedSpan(extents, [&](size_t, size_t, uint64_t begin, uint64_t end) {
      own.push_back(ByteSpan{begin, end - begin});
    });
  } else {
    for (uint64_t index : blocks) {
      if (!open_file.owners.LocalTo(index, open_file.comm_rank)) {
        remote[open_file.owners.OwnerOf(index)].push_back(index);
      } else if (!own.empty() && own.back().offset + own.back().length == index * block_size) {
        own.back().length += block_size;
      } else {
        own.push_back(ByteSpan{index * block_size, block_size});
      }
    }
  }
  const HelperFetchOptions options{gate_, file.ppis};
  const HelperFetchResult fetched = FetchForHelper(
      cache, open_file.id, own, options, cancelled_,
      [&] { return !file.sequence.Behind(sequence); });
  FileStats& stats = file.stats();
  stats.Add(Counter::preexec_gate_waits, fetched.gate_waits);
  if (fetched.lagging) stats.Add(Counter::preexec_skipped_lagging, 1);
  if (fetched.failed) stats.Add(Counter::preexec_dropped, 1);
  uint64_t announced = fetched.announced_bytes;
  for (const auto& [owner, owned] : remote) {
    if (file.ppis && gate_ && gate_->WaitForMainThread(cancelled_)) {
      stats.Add(Counter::preexec_gate_waits, 1);
    }
    if (cancelled_.load()) break;
    // Sent and taken while the file is open: close frees the communicator.
    file.sequence.main().RunWhileOpen([&] {
      PrefetchHints hints;
      hints.Send(open_file.comm, owner, owned);
      hints.WaitAll();
    });
    announced += owned.size() * block_size;
  }
  budget_.Add(file.sequence.shared_main(), sequence, announced);
}

}  // namespace stagio
