// SegmentStore: the daemon's storage tier of seed 002 (SOGP). It keeps a second copy of the
// extents that reads tie together, grouped into large segments on a fast local disk, so that a
// later pass over scattered pieces costs one sequential local read per segment instead of one
// storage request per piece. It is a cache: the files on storage are never modified, and
// anything it is unsure of is dropped and read from storage.
//
//   reads  ──> Read: spans in segments come from the segment cache (memory, whole segments,
//              LRU) or the segment file; the rest from storage. Every read is recorded in the
//              access graph and counts as demand.
//   idle   ──> GroupIfIdle: once storage has seen no demand for idle_seconds, the access graph
//              is cut into groups (grouping.h), their unplaced parts are read from storage and
//              written as segments; the work yields as soon as a demand request begins.
//   writes ──> Invalidate: every segment holding a byte of the range goes, on disk and in
//              memory, before the write is acknowledged (segmented_file.h calls it).
//
// Staleness. A file's segments are valid for one version of it (size and modification time,
// FileVersion). The daemon's own writes invalidate the segments they touch and then take the
// new version (Rewritten); a version found different when the file is opened or synced, or at
// grouping time, drops all of the file's segments (Track), and a client that wrote storage
// directly says so (DropFile, from the client's invalidate). A grouping run keeps its segment
// only if no write or drop touched its files while it read them.
//
// Failures never reach the reader: a segment that fails its checksum or comes back short is
// dropped and its bytes read from storage; a segment file that cannot be written stops the
// grouping (the store keeps serving what it holds).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "segstore/access_graph.h"
#include "segstore/extent.h"
#include "segstore/grouping.h"
#include "segstore/idle_tracker.h"
#include "segstore/lookup_table.h"
#include "segstore/segment_area.h"
#include "segstore/segment_cache.h"
#include "segstore/segment_store_stats.h"
#include "storage/driver.h"

namespace stagio {
namespace segstore {

struct SegmentStoreOptions {
  std::string location;                    // a directory, or a raw partition's block device
  uint64_t size = uint64_t{1} << 30;       // bytes of segments on disk
  uint64_t segment_size = uint64_t{16} << 20;  // the seed's 16 MB
  uint64_t cache_size = uint64_t{128} << 20;   // segments held in memory
  uint32_t popularity_j = 1;               // a successor counts when seen j times ...
  uint32_t popularity_k = 4;               // ... among the last k
  double idle_seconds = 5;                 // the seed's idle threshold
  size_t max_extents = size_t{1} << 18;    // extents the access graph remembers
};

// Opens a file again for grouping (its reader may have closed it), by the path it was read
// under; fails if that path no longer names the same file.
using FileOpener = std::function<Status(const FileKey& file, const std::string& path,
                                        std::unique_ptr<DriverFile>* opened)>;
using StoreLog = std::function<void(const std::string& line)>;

class SegmentStore {
 public:
  // Fails, with a message naming the location, when the segment area cannot be made.
  static Status Create(const SegmentStoreOptions& options, FileOpener opener, StoreLog log,
                       Clock* clock, std::unique_ptr<SegmentStore>* store);
  ~SegmentStore();  // stops the idle work
  SegmentStore(const SegmentStore&) = delete;
  SegmentStore& operator=(const SegmentStore&) = delete;

  // A file is open as `path` and is at `version` now: segments made from another version go.
  void Track(const FileKey& file, const std::string& path, std::optional<FileVersion> version);
  // Reads like DriverFile::ReadAt from `storage`, the file's storage, taking what segments
  // hold from them.
  Status Read(const FileKey& file, DriverFile* storage, uint64_t offset, void* buffer,
              size_t length, size_t* bytes_read);
  // [offset, offset + length) is about to change: the segments holding any of it go.
  void Invalidate(const FileKey& file, uint64_t offset, uint64_t length);
  // The daemon wrote [offset, offset + length) of the file (after Invalidate): what the store
  // holds of the range goes once more (a grouping run may have read the old bytes in between),
  // and the file is at `version` now.
  void Rewritten(const FileKey& file, uint64_t offset, uint64_t length,
                 std::optional<FileVersion> version);
  // The file changed behind the daemon, anywhere: all of its segments go.
  void DropFile(const FileKey& file);

  // One grouping run, now, if storage has been idle for idle_seconds and something was read
  // since the last run. True if it ran to the end.
  bool GroupIfIdle();
  // A thread that calls GroupIfIdle every idle_seconds / 5 (the seed's check each second for
  // five seconds idle), until the store is destroyed.
  void StartIdleWork();

  IdleTracker& idle() { return idle_; }
  const SegmentStoreStats& stats() const { return stats_; }
  nlohmann::json StatsJson() const;
  const SegmentStoreOptions& options() const { return options_; }
  uint32_t segments_held() const;

 private:
  struct FileState {
    std::string path;
    std::optional<FileVersion> version;
    uint64_t generation = 0;  // moves at every write or drop
  };
  struct Slot {
    bool used = false;
    bool loading = false;
    uint64_t last_used = 0;
    uint64_t epoch = 0;  // moves when the slot's content goes
  };
  // A file as one grouping run reads it.
  struct Source {
    std::unique_ptr<DriverFile> file;
    FileVersion version;
    uint64_t generation = 0;
    bool usable = false;
    bool changed = false;  // found at another version than the store knew
  };
  enum class PlanOutcome { kWritten, kDiscarded, kYielded, kFull, kFailed };

  SegmentStore(const SegmentStoreOptions& options, std::unique_ptr<SegmentArea> area,
               FileOpener opener, StoreLog log, Clock* clock);

  // Copies `length` bytes at `placement` into `destination`; false if the segment is gone or
  // unreadable (the caller reads storage instead).
  bool CopyFromSegment(const Placement& placement, uint64_t length, char* destination);
  void DropSegmentLocked(uint32_t slot);
  void DropFileLocked(const FileKey& file);
  // Drops `slots`, counted as invalidated, and moves the file's generation: it changed.
  void InvalidateLocked(const FileKey& file, const std::vector<uint32_t>& slots);
  uint32_t HeldLocked() const;

  // Grouping (segment_store_grouping.cc).
  PlanOutcome WritePlan(const SegmentPlan& plan, uint64_t demand,
                        std::map<FileKey, Source>* sources);
  Source& SourceFor(const FileKey& file, std::map<FileKey, Source>* sources);
  bool TakeSlotLocked(const std::vector<uint32_t>& keep, uint32_t* slot);
  bool ShouldYield(uint64_t demand) const;

  const SegmentStoreOptions options_;
  const std::unique_ptr<SegmentArea> area_;
  const FileOpener opener_;
  const StoreLog log_;
  IdleTracker idle_;
  AccessGraph graph_;
  SegmentStoreStats stats_;

  mutable std::mutex mutex_;
  std::condition_variable loaded_;  // a slot's loading ended
  LookupTable table_;
  SegmentCache cache_;
  std::map<FileKey, FileState> files_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t tick_ = 0;
  bool write_failed_ = false;        // the segment file cannot be written: no more grouping
  uint64_t recorded_at_last_run_ = 0;
  std::vector<uint32_t> run_slots_;  // slots the current grouping run wrote

  std::mutex thread_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace segstore
}  // namespace stagio
