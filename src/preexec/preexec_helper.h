// HelperRun: one pre-execution helper thread and what it knows (seed 001, seed 003).
//
// The helper runs the application's I/O slice (stagio_preexec_start), whose stagio_prefetch_*
// calls land here on the helper thread. For each file it keeps its own view, prefetch file
// pointer, place in the file's call sequence and table of dirty ranges, and it turns each
// prefetch read into cache fetches:
//   1. number the call; if the main thread has already begun that call, skip it (lag);
//   2. map it through the helper's view to file extents, cut at the end of file;
//   3. if it overlaps a range a pending main-thread write will change, wait for that write;
//   4. wait while the helper is a cache's worth ahead of the main thread (RunAheadBudget);
//   5. announce the blocks that are cached (they stay until read), and fetch the others in
//      runs of consecutive blocks, each run one storage request that waits at the PPIS gate
//      first; blocks other ranks own (collective cache) are asked of their owners as
//      prefetch hints.
// Prefetch writes only record dirty ranges; sync points wait for the main thread's call.
//
// Nothing here can change what the application reads: a fetch only fills bytes the cache does
// not hold (never bytes written since), and the cache's invalidation epochs and the engine's
// drops around calls that change storage behind the cache keep fetched data current. So the
// slice may be wrong, late or early: it costs fetches, never bytes.
//
// Threading: Bind, Start, Join and OnMainOpen are the main thread's; the prefetch calls are
// the helper thread's (Current() finds the run from it). The run's file table is the helper
// thread's once it has started.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <condition_variable>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/stats.h"
#include "mpiio/file_view.h"
#include "mpiio/open_file.h"
#include "preexec/dirty_range_table.h"
#include "preexec/helper_sequence.h"
#include "preexec/io_priority_gate.h"
#include "preexec/prefetch_pointer.h"
#include "preexec/run_ahead_budget.h"

namespace stagio {

class Runtime;

class HelperRun {
 public:
  using Slice = void (*)(void* arg);

  HelperRun(Runtime& runtime, IoPriorityGate* gate, Slice slice, void* arg);
  ~HelperRun();  // joins
  HelperRun(const HelperRun&) = delete;
  HelperRun& operator=(const HelperRun&) = delete;

  // Main thread, before Start: the helper takes the file as it is now (view, individual
  // pointer, next call).
  void Bind(const std::shared_ptr<OpenFile>& file);
  void Start();
  // Main thread: releases every wait of the helper, makes its remaining calls return at once,
  // and waits for the slice to return.
  void Join();
  // Main thread: a file was opened (stagio_prefetch_open matches them by name and order).
  void OnMainOpen(const std::shared_ptr<OpenFile>& file);

  // The run whose helper thread is calling; null on any other thread.
  static HelperRun* Current();

  // The prefetch calls (include/stagio/stagio.h). `offset` is set for the explicit-offset
  // forms, empty for those that use the prefetch file pointer.
  void Open(const char* path, MPI_File* handle);
  void Close(MPI_File* handle);
  void SyncPoint(MPI_File handle);  // sync and set_size
  void SetView(MPI_File handle, MPI_Offset displacement, MPI_Datatype etype,
               MPI_Datatype filetype, const char* datarep);
  void Seek(MPI_File handle, MPI_Offset offset, int whence);
  void Read(MPI_File handle, std::optional<MPI_Offset> offset, MPI_Count count,
            MPI_Datatype datatype);
  void Write(MPI_File handle, std::optional<MPI_Offset> offset, MPI_Count count,
             MPI_Datatype datatype);

  // Calls dropped for handles the helper does not know (no file to count them under).
  const FileStats& unattributed_stats() const { return unattributed_; }

 private:
  // Holds the file's count of helpers (OpenFile::preexec_helpers) up while it lives.
  class HelperClaim {
   public:
    HelperClaim(std::shared_ptr<OpenFile> file, bool counted)
        : file_(std::move(file)), counted_(counted) {
      if (counted_) file_->preexec_helpers.fetch_add(1);
    }
    ~HelperClaim() {
      if (counted_ && file_) file_->preexec_helpers.fetch_sub(1);
    }
    HelperClaim(HelperClaim&& other) noexcept
        : file_(std::move(other.file_)), counted_(other.counted_) {
      other.counted_ = false;
    }
    HelperClaim& operator=(HelperClaim&&) = delete;
    HelperClaim(const HelperClaim&) = delete;
    HelperClaim& operator=(const HelperClaim&) = delete;
    OpenFile& operator*() const { return *file_; }
    OpenFile* operator->() const { return file_.get(); }

   private:
    std::shared_ptr<OpenFile> file_;
    bool counted_;
  };

  // One file as the helper sees it.
  struct HelperFile {
    HelperClaim file;  // its id, backend, communicator and owners never change
    HelperSequence sequence;
    FileView view;
    PrefetchPointer pointer;
    DirtyRangeTable dirty;
    bool enabled;  // stagio_preexec is not off for the file, and stagio serves it
    bool ppis;     // its storage requests wait at the gate
    FileStats& stats() { return *file->backend->stats(); }
  };

  void Run();
  HelperFile* Find(MPI_File handle);
  // What the helper needs of the file's settings, read on the main thread (which may change
  // them at any time).
  struct Mode {
    bool enabled;
    bool ppis;
  };
  static Mode ModeOf(const OpenFile& file);
  void Take(const std::shared_ptr<OpenFile>& file, Mode mode, FileView view, int64_t pointer,
            uint64_t last_begun);
  // The file bytes of an access of `count` `datatype`s at the offset or prefetch pointer;
  // numbers the call. False if the call is dropped (bad arguments).
  bool Locate(HelperFile& file, std::optional<MPI_Offset> offset, MPI_Count count,
              MPI_Datatype datatype, uint64_t* sequence, std::vector<Extent>* extents);
  // The file extents of stream bytes [stream_begin, + bytes), bounded (see the definition).
  void MapForHelper(const FileView& view, uint64_t stream_begin, uint64_t bytes,
                    std::vector<Extent>* extents) const;
  // Step 3: false if cancelled or the file closed while waiting.
  bool WaitForWritesBefore(HelperFile& file, const std::vector<Extent>& extents);
  // Steps 4 and 5.
  void Fetch(HelperFile& file, uint64_t sequence, const std::vector<Extent>& extents);
  void WaitForBudget(uint64_t bytes, FileStats& stats);

  Runtime& runtime_;
  IoPriorityGate* gate_;
  Slice slice_;
  void* arg_;
  std::thread thread_;
  std::atomic<bool> cancelled_{false};
  std::unordered_map<MPI_File, HelperFile> files_;
  RunAheadBudget budget_;
  FileStats unattributed_;

  // Files the main thread opened since the run started, by name, in order; and how many of
  // each the helper has taken.
  std::mutex opens_mutex_;
  std::condition_variable opened_;
  struct MainOpen {
    std::weak_ptr<OpenFile> file;
    Mode mode;
  };
  std::unordered_map<std::string, std::vector<MainOpen>> opens_;
  std::unordered_map<std::string, size_t> opens_taken_;  // helper thread only
  // A stagio_prefetch_open found its file closed again (the helper is that far behind): the
  // slice's later calls on the MPI_FILE_NULL it got are late, not wrong. Helper thread only.
  bool opened_too_late_ = false;
  // Every file's progress the helper may wait on, for Join to wake.
  std::vector<std::shared_ptr<MainThreadProgress>> waited_on_;
};

}  // namespace stagio
