// DirectPolicy: whether one data-access call goes through the cache or straight to storage
// (the direct path, direct_access.h).
//
// The cache wins time only where storage is slow next to a copy in memory. It hides a read's
// storage time behind the application's compute (prefetching) and a write's (write-back), and
// it pays for that with one more copy of every byte, its bookkeeping, and its threads' share of
// the cores. Where storage moves a byte about as fast as memory copies one (tmpfs, a page cache
// that holds the file, a fast local device) there is next to nothing to hide and the copy is
// all cost. A transfer that fills a good part of the cache would push out blocks that may still
// be used, and wait for its own misses. So in the automatic mode a call takes the direct path
// when
//   - it moves at least kLargeShareOfCache of this process's cache (stagio_cache_size), or
//   - storage, as the file's recent requests found it (storage/storage_speed.h), is fast: it
//     would take the call's bytes in less than ten times what the cache path costs the call
//     (FastStorageSecondsPerByte), or
//   - it is a write of at least a cache block and the application leaves too little time
//     between its calls to hide the write's storage time in (application_time.h): less than
//     the same bound per byte moved. Write-back hides a write only in the application's time
//     outside stagio; with none, the write waits for it anyway, and the cache adds its copy.
//     Smaller writes stay in the cache: it merges them into block-sized requests, which is a
//     gain of its own on storage that charges per request. Reads stay too: a prefetch gains
//     from requests in flight together, and a pre-execution helper's from running ahead,
//     without time between the calls. So do the writes of a file that reads through the
//     cache (an out-of-core update): after a direct write its next cached call drops the
//     file's cached blocks, and the reads would lose what was prefetched for them.
// Until stagio has timed a request of the call's direction, the call goes direct as a probe:
// its own time is the measurement. A read that went through the cache first would time its
// misses, but it would pay for the cache's blocks on a device where no later call uses them
// (the first 4 MiB reads from tmpfs took three times a direct read's time, allocating and
// faulting in fresh blocks). A write cannot wait for write-back either: on the node cache,
// write-back is any rank's work, so a rank whose dirty blocks other ranks write back would
// never learn the speed, and stay in the cache on a device where every other rank goes
// direct. A probing read still tells the file's prefetcher what it read (engine_access.cc).
// Probes end with the first sample: one request of StorageSpeed::kMinSampleBytes, or a few
// smaller ones; and a file whose device another file of the process has timed starts from
// that device's speed, so only the first file per device and direction probes. Where storage
// is slow, the probes cost what the cache would have hidden of them. The speed keeps being
// measured while calls go direct (each direct call is timed), so a file whose storage turns
// slow goes back to the cache. Writes that stay in the cache are probed again now and then:
// their write-back, which would time the storage, may not run before close (nothing pushes
// the cache to its water mark), so a rank whose probes met a busy moment (with more ranks
// than cores, 40 KiB tmpfs writes sometimes took over 60 µs) would keep its writes in the
// cache to the end. The re-probes come after kFirstReprobeAfter cached writes, then after
// twice as many each time, up to kLongestReprobeGap, so on storage that is slow they cost
// little of what the cache hides. A re-probe that ChooseDirectPath then refuses (a write of
// several file ranges) still counts as made. Reads need none: their fetches time the storage. The
// decision leans to the direct path where it is unsure, because that path costs what plain
// MPI-IO costs: it is plain MPI-IO.
//
// Not thread-safe: one per open file, used on the application thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "storage/storage_speed.h"

namespace stagio {

enum class DirectMode {
  kAuto,       // decide each call from what stagio measured (above)
  kAlways,     // every call that can take the direct path takes it (tests, benchmarks)
  kNever,      // every call goes through the cache
  kAlternate,  // every other call: for tests that mix the two paths over the same bytes
};

// "auto", "always", "never", "alternate" (stagio_direct; config.cc validates it).
DirectMode ParseDirectMode(const std::string& text);

// Why a call goes where it goes (counted in the file's stats).
enum class DirectReason {
  kCached,       // through the cache
  kLarge,        // direct: the transfer is a large share of the cache
  kFastStorage,  // direct: storage is about as fast as a copy in memory
  kNoTimeToHide, // direct: a block-sized write, and no time between calls to write it back in
  kProbe,        // direct: to time storage not timed yet in the call's direction, or a
                 // write's storage again (re-probe)
  kForced,       // direct: stagio_direct=always or alternate
};

// What the decision looks at, for one call.
struct DirectCallFacts {
  bool write = false;
  uint64_t bytes = 0;            // the call's transfer
  uint64_t cache_capacity = 0;   // this process's cache, bytes (stagio_cache_size)
  // The file's storage in the call's direction (StorageSpeed::SecondsPerByte); none yet if
  // stagio has not timed a request of that direction.
  std::optional<double> storage_seconds_per_byte;
  uint64_t block_size = 0;       // the cache's block (stagio_block_size)
  // The file has read through the cache: a direct write would make its next cached call drop
  // the file's cached blocks (direct_access.h), prefetched ones included.
  bool reads_through_cache = false;
  // The application's time outside stagio per byte moved (ApplicationTime); none: plenty.
  std::optional<double> outside_seconds_per_byte;
};

class DirectPolicy {
 public:
  // A transfer of at least this share of the cache goes direct.
  static constexpr double kLargeShareOfCache = 0.25;
  // Storage faster than this per byte (1 GB/s for one request) is fast: a copy through the
  // cache, 0.1 ns per byte from memory on the machines stagio runs on, would cost a tenth or
  // more of the storage time it could hide, and with nothing to hide behind all of it. Here
  // a 1 MiB pread from tmpfs or a warm page cache takes 0.11-0.2 ns per byte into a warm
  // buffer, and 0.6-0.7 ns into a block the cache has just allocated (its pages are faulted
  // in by the read, and stagio times what it pays); the emulated devices take 5-25 ns. A
  // constant, not a measured copy speed: measuring one that memory caches do not flatter
  // took 27 ms and 32 MiB per process, more than the whole job this path exists for.
  static constexpr double kFastStorageSecondsPerByte = 1e-9;
  // What a call through the cache costs besides its copy: finding and locking its blocks,
  // the bookkeeping, the stats. Measured here: 4,096 writes of 1 KiB through the cache took
  // 2-3 µs each, where tmpfs took a 1 KiB pwrite in 2 µs. For a small call this fixed cost,
  // not the copy, is what storage must beat, so the bound on fast storage grows as calls
  // shrink: a 1 KiB call is fast at 20 ns per byte (20 µs a call), a 40 KiB one at 1.5 ns,
  // a 4 MiB one at 1 ns.
  static constexpr double kCachedCallSeconds = 2e-6;
  // Re-probes of writes that storage keeps in the cache (above): the first after this many
  // cached writes, the gap doubling each time up to kLongestReprobeGap (one write in 1,025
  // once there, a sample's worth of small ones; 6 re-probes in the first 2,000 writes).
  static constexpr uint64_t kFirstReprobeAfter = 16;
  static constexpr uint64_t kLongestReprobeGap = 1024;

  // The speed under which storage is fast for a call of `bytes`: it then takes the call's
  // bytes in less than ten times what the cache path would cost the call, as
  // kFastStorageSecondsPerByte is ten copies.
  static double FastStorageSecondsPerByte(uint64_t bytes);
  // True if storage measured at this speed (StorageSpeed::SecondsPerByte) is fast for a call
  // of `bytes`; false if it is slow or was not timed yet. The same test tells whether the
  // application's time outside stagio (per byte) is too short to hide a call of `bytes` in.
  static bool IsFast(std::optional<double> seconds_per_byte, uint64_t bytes);

  DirectReason Decide(DirectMode mode, const DirectCallFacts& facts);

 private:
  // For a write that slow storage would keep in the cache: a re-probe, or kCached.
  DirectReason CachedOrReprobe(uint64_t bytes);

  uint64_t alternate_calls_ = 0;
  uint64_t cached_writes_ = 0;                   // since the last re-probe
  uint64_t reprobe_gap_ = kFirstReprobeAfter;    // cached writes before the next one
  int reprobe_calls_left_ = 0;                   // of a re-probe that one call cannot sample
};

}  // namespace stagio
