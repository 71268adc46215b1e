#include "storage/storage_speed.h"

#include <algorithm>

namespace stagio {

void StorageSpeed::Record(StorageDirection direction, uint64_t bytes, double seconds) {
  if (bytes < kMinSampleBytes || !(seconds >= 0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Window& window = windows_[static_cast<size_t>(direction)];
  window.seconds_per_byte[window.next] = seconds / static_cast<double>(bytes);
  window.next = (window.next + 1) % kWindow;
  window.count = std::min(window.count + 1, kWindow);
}

std::optional<double> StorageSpeed::SecondsPerByte(StorageDirection direction) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Window& window = windows_[static_cast<size_t>(direction)];
  if (window.count == 0) return std::nullopt;
  return *std::min_element(window.seconds_per_byte.begin(),
                           window.seconds_per_byte.begin() + window.count);
}

}  // namespace stagio
