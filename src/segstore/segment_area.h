// SegmentArea: the segments on local disk, fixed-size slots of one preallocated file in the
// segment directory, or of a raw partition (seed 002 §3.3), each holding one segment's bytes
// back to back from its start.
//
// The area's index is in memory only: what each slot holds, how many bytes, and their CRC-32.
// So a daemon that starts again starts with an empty store (the seed's choice too, §3: the
// originals on storage are the only copy that matters), and the file is recreated at start. A
// slot read back checks its length and checksum, so bytes truncated or overwritten behind the
// daemon's back are found, never served.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace stagio {
namespace segstore {

class SegmentArea {
 public:
  // The file inside a segment directory.
  static constexpr const char* kFileName = "stagio-segments";
  // Slots one area may have: 2^20, 16 TiB of 16 MiB segments. Each costs the store some 50
  // bytes of memory, and evicting scans them.
  static constexpr uint64_t kMaxSlots = uint64_t{1} << 20;

  // `location` is a directory (the area is kFileName in it, created anew and `size` bytes
  // reserved at once, so a full disk shows now and not at the first segment; locked, so that
  // a second daemon on the same directory is refused) or a block device. Fails with a
  // message naming the location when it cannot be used, or when `size` holds no segment.
  static Status Open(const std::string& location, uint64_t size, uint64_t segment_size,
                     std::unique_ptr<SegmentArea>* area);
  ~SegmentArea();  // a segment file made in a directory is removed
  SegmentArea(const SegmentArea&) = delete;
  SegmentArea& operator=(const SegmentArea&) = delete;

  uint32_t slot_count() const { return static_cast<uint32_t>(slots_.size()); }
  uint64_t segment_size() const { return segment_size_; }
  const std::string& path() const { return path_; }

  // Writes `data` (at most one segment) into `slot` and records its length and checksum.
  // Thread-safe; the caller keeps two writers and a reader off one slot at once.
  Status Write(uint32_t slot, const std::string& data);
  // Reads back what `slot` holds; an error if it holds nothing, if the bytes are short, or if
  // they do not match their checksum.
  Status Read(uint32_t slot, std::string* data) const;
  // The slot holds nothing from now on.
  void Forget(uint32_t slot);

 private:
  struct Slot {
    bool used = false;
    uint64_t length = 0;
    uint32_t checksum = 0;
  };
  SegmentArea(std::string path, int fd, bool owns_file, uint64_t segment_size, uint32_t slots);

  const std::string path_;
  const bool owns_file_;  // made in a directory (not a block device): removed at the end
  const int fd_;
  const uint64_t segment_size_;
  mutable std::mutex mutex_;  // guards slots_, not the I/O
  std::vector<Slot> slots_;
};

}  // namespace segstore
}  // namespace stagio
