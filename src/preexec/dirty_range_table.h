// DirtyRangeTable: the file bytes the main thread is going to write, as a pre-execution helper
// learns them from its prefetch writes (seed 001, section III-C2, "delayed synchronization").
//
// The helper writes nothing. It records each write's byte range tagged with the write's
// sequence number (its place in the file's call sequence, which the main thread's calls share).
// A later prefetch read that overlaps a recorded range must wait until the main thread has made
// that write, or it would fetch bytes about to change. Only read-after-write is a true
// dependency, so the helper runs on past writes until a read needs one of them.
//
// The ranges never overlap: a newer write of a byte replaces the older one's claim on it (the
// older range is split around it), and touching ranges of one write are merged. A read waits
// for the newest write of any byte it overlaps; the main thread makes its calls in order, so
// that write's completion implies the older ones'. Once the main thread has completed a call,
// ReleaseThrough forgets the ranges of that call and every earlier one.
//
// Not to be confused with the cache's DirtyRangeMap (cache/dirty_range_map.h), which holds the
// bytes of a cached block that are written but not yet on storage.
//
// Threading: used by the helper thread alone.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace stagio {

class DirtyRangeTable {
 public:
  struct Range {
    uint64_t begin;
    uint64_t end;       // exclusive
    uint64_t sequence;  // the write call that makes these bytes
    bool operator==(const Range& other) const {
      return begin == other.begin && end == other.end && sequence == other.sequence;
    }
  };

  // Records that call `sequence` writes file bytes [begin, end). Sequence numbers only grow.
  void Record(uint64_t begin, uint64_t end, uint64_t sequence);
  // The newest write call among the ranges that overlap [begin, end); 0 if none does.
  uint64_t NewestWriteOverlapping(uint64_t begin, uint64_t end) const;
  // Forgets the ranges of calls up to and including `sequence`: the main thread has made them.
  void ReleaseThrough(uint64_t sequence);

  bool empty() const { return ranges_.empty(); }
  // The ranges in file order (tests and logs).
  std::vector<Range> Ranges() const;

 private:
  // Cuts [begin, end) out of every range, keeping the parts outside it.
  void Erase(uint64_t begin, uint64_t end);

  struct Tail {
    uint64_t end;
    uint64_t sequence;
  };
  std::map<uint64_t, Tail> ranges_;  // by begin
};

}  // namespace stagio
