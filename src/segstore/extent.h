// The units the segment store works in: a file, known by its identity on the daemon's machine
// (every name of one file is the same file), and an extent of it, a byte range one storage
// read asked for.
#pragma once

#include <cstdint>
#include <functional>

namespace stagio {
namespace segstore {

struct FileKey {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileKey& other) const {
    return device == other.device && inode == other.inode;
  }
  bool operator<(const FileKey& other) const {
    return device != other.device ? device < other.device : inode < other.inode;
  }
};

struct Extent {
  FileKey file;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t end() const { return offset + length; }
  bool operator==(const Extent& other) const {
    return file == other.file && offset == other.offset && length == other.length;
  }
};

struct ExtentHash {
  size_t operator()(const Extent& extent) const {
    // boost::hash_combine's mixing, over the four words.
    size_t seed = 0;
    for (uint64_t word : {extent.file.device, extent.file.inode, extent.offset, extent.length}) {
      seed ^= std::hash<uint64_t>()(word) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    }
    return seed;
  }
};

}  // namespace segstore
}  // namespace stagio
