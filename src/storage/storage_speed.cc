#include "storage/storage_speed.h"

#include <algorithm>

namespace stagio {

void StorageSpeed::Record(StorageDirection direction, uint64_t bytes, double seconds) {
  if (bytes == 0 || !(seconds >= 0)) return;
  if (device_) device_->Record(direction, bytes, seconds);
  std::lock_guard<std::mutex> lock(mutex_);
  Window& window = windows_[static_cast<size_t>(direction)];
  if (bytes < kMinSampleBytes) {
    window.small_bytes += bytes;
    window.small_seconds += seconds;
    if (++window.small_requests < kSmallRequestsPerSample &&
        window.small_bytes < kMinSampleBytes) {
      return;
    }
    bytes = window.small_bytes;
    seconds = window.small_seconds;
    window.small_bytes = 0;
    window.small_seconds = 0;
    window.small_requests = 0;
  }
  window.seconds_per_byte[window.next] = seconds / static_cast<double>(bytes);
  window.next = (window.next + 1) % kWindow;
  window.count = std::min(window.count + 1, kWindow);
}

std::optional<double> StorageSpeed::SecondsPerByte(StorageDirection direction) const {
  std::optional<double> own = OwnSecondsPerByte(direction);
  if (own || !device_) return own;
  return device_->SecondsPerByte(direction);
}

std::optional<double> StorageSpeed::OwnSecondsPerByte(StorageDirection direction) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Window& window = windows_[static_cast<size_t>(direction)];
  if (window.count == 0) return std::nullopt;
  return *std::min_element(window.seconds_per_byte.begin(),
                           window.seconds_per_byte.begin() + window.count);
}

std::shared_ptr<StorageSpeed> DeviceSpeeds::For(uint64_t device) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<StorageSpeed>& speed = speeds_[device];
  if (!speed) speed = std::make_shared<StorageSpeed>();
  return speed;
}

}  // namespace stagio
