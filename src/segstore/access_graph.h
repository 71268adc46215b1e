// AccessGraph: which extents are read after which, by recent popularity (seed 002 §3.5.2, the
// best-j-out-of-k rule of Amer and Long): each extent remembers its last k successors, the
// extents read right after it, and B is related to A while B is at least j of them. A pattern
// that stops recurring drops out after k reads of A, and the memory is bounded: k successors
// per extent, at most `max_extents` extents (the least recently read half goes when full).
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "segstore/extent.h"

namespace stagio {
namespace segstore {

class AccessGraph {
 public:
  // 1 <= j <= k.
  AccessGraph(uint32_t j, uint32_t k, size_t max_extents);

  // `extent` was read, after the one recorded before it.
  void Record(const Extent& extent);
  // How many reads were recorded so far.
  uint64_t recorded() const;

  struct Node {
    Extent extent;
    uint64_t last_read = 0;  // the count of records when it was last read: access order
    std::vector<size_t> related;  // indexes into the snapshot: popular successors
  };
  // Every extent with its related successors.
  std::vector<Node> Snapshot() const;

 private:
  struct Entry {
    Extent extent;
    uint64_t last_read = 0;
    std::vector<uint32_t> successors;  // a ring of the last k, by entry index
    uint32_t next_slot = 0;
  };
  // Keeps the most recently read half of the entries, renumbered.
  void ForgetOldest();

  const uint32_t j_;
  const uint32_t k_;
  const size_t max_extents_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::unordered_map<Extent, uint32_t, ExtentHash> index_;
  int64_t previous_ = -1;  // the entry read last
  uint64_t recorded_ = 0;
};

}  // namespace segstore
}  // namespace stagio
