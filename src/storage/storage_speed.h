// StorageSpeed: how long storage takes to move a byte, as stagio's own requests found it.
//
// The direct path (direct/direct_policy.h) needs to know whether storage is slow next to a copy
// in memory, which is what decides whether caching can hide anything. No setting could say it
// (one job runs on tmpfs and a parallel file system at once, and a page cache makes one device
// fast today and slow tomorrow), so the file's backend times every request it sends and keeps
// here, per direction, the seconds per byte of the last few that were large enough to show the
// device's speed rather than the fixed cost of a call (smaller ones are summed into one sample,
// so that a file written in small pieces is timed too). The estimate is the least of those: a
// request can be slowed by whatever else runs (a busy core, another rank's I/O) but never sped
// up, so the least is the one closest to the device. Thread-safe: the application thread and
// the I/O workers record.
//
// A file's speed can share in its device's (ShareWith): what every file of the process on that
// device measured. A file not timed yet then takes its device's speed, so that the second file
// a job opens on tmpfs starts on the direct path, and the hundredth small file on a slow device
// does not probe it again. The file's own samples win once it has some: one device holds files
// that its page cache keeps and files it does not.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace stagio {

enum class StorageDirection { kRead, kWrite };

class StorageSpeed {
 public:
  // Requests smaller than this say more about the cost of a call than about the device. They
  // are summed, bytes and seconds, into one sample of at least this size, or of
  // kSmallRequestsPerSample requests if they come to less: with their fixed costs in, which is
  // what storage costs a file written in small pieces.
  static constexpr uint64_t kMinSampleBytes = 256 << 10;
  static constexpr int kSmallRequestsPerSample = 4;
  // How many recent requests of each direction the estimate looks at: few enough that a device
  // that turned slow (a page cache that let the file go) shows within a few blocks.
  static constexpr int kWindow = 8;

  // One request of `bytes` that took `seconds` (a sample, or a part of one below
  // kMinSampleBytes).
  void Record(StorageDirection direction, uint64_t bytes, double seconds);
  // Seconds per byte of the fastest recent request of that direction; until one was recorded,
  // the device's (if shared), else nothing.
  std::optional<double> SecondsPerByte(StorageDirection direction) const;
  // Records go to `device` too, which answers for this one until it has its own samples. Set
  // once, before the first Record.
  void ShareWith(std::shared_ptr<StorageSpeed> device) { device_ = std::move(device); }

 private:
  std::optional<double> OwnSecondsPerByte(StorageDirection direction) const;

  struct Window {
    std::array<double, kWindow> seconds_per_byte{};
    int count = 0;  // samples held, up to kWindow
    int next = 0;   // where the next sample goes
    // Small requests summed towards the next sample.
    uint64_t small_bytes = 0;
    double small_seconds = 0;
    int small_requests = 0;
  };
  mutable std::mutex mutex_;
  std::array<Window, 2> windows_;
  std::shared_ptr<StorageSpeed> device_;
};

// The speed of each device (st_dev) the process's files are on. Thread-safe.
class DeviceSpeeds {
 public:
  std::shared_ptr<StorageSpeed> For(uint64_t device);

 private:
  std::mutex mutex_;
  std::map<uint64_t, std::shared_ptr<StorageSpeed>> speeds_;
};

}  // namespace stagio
