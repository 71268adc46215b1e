// StorageSpeed: how long storage takes to move a byte, as stagio's own requests found it.
//
// The direct path (direct/direct_policy.h) needs to know whether storage is slow next to a copy
// in memory, which is what decides whether caching can hide anything. No setting could say it
// (one job runs on tmpfs and a parallel file system at once, and a page cache makes one device
// fast today and slow tomorrow), so the file's backend times every request it sends and keeps
// here, per direction, the seconds per byte of the last few that were large enough to show the
// device's speed rather than the fixed cost of a call. The estimate is the least of those: a
// request can be slowed by whatever else runs (a busy core, another rank's I/O) but never sped
// up, so the least is the one closest to the device. Thread-safe: the application thread and
// the I/O workers record.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>

namespace stagio {

enum class StorageDirection { kRead, kWrite };

class StorageSpeed {
 public:
  // Requests smaller than this say more about the cost of a call than about the device.
  static constexpr uint64_t kMinSampleBytes = 256 << 10;
  // How many recent requests of each direction the estimate looks at: few enough that a device
  // that turned slow (a page cache that let the file go) shows within a few blocks.
  static constexpr int kWindow = 8;

  // One request of `bytes` that took `seconds`; ignored below kMinSampleBytes.
  void Record(StorageDirection direction, uint64_t bytes, double seconds);
  // Seconds per byte of the fastest recent request of that direction; nothing until one was
  // recorded.
  std::optional<double> SecondsPerByte(StorageDirection direction) const;

 private:
  struct Window {
    std::array<double, kWindow> seconds_per_byte{};
    int count = 0;  // samples held, up to kWindow
    int next = 0;   // where the next sample goes
  };
  mutable std::mutex mutex_;
  std::array<Window, 2> windows_;
};

}  // namespace stagio
