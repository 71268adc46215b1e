// FrameFetches: the storage reads under way into one frame of the node cache, each by a
// process, of a range of the frame's block.
//
// Why several. A block (1 MiB by default) holds many small reads: the ranks' tiles of one
// frame of an image, the rows a pre-execution helper fetches ahead. With one fetch per frame,
// every rank's read of a block waited for any other rank's fetch of other bytes of it, and
// prefetches were skipped as "on their way" when other bytes were. Each fetch here records its
// bytes, so a read waits only for a fetch that brings bytes it needs, and fetches of different
// bytes run side by side.
//
// A fetch that outlives the bytes it would fill is stale: bytes forgotten while it was on its
// way (given up to make room, or newer on storage than what it read) must not be filled by it,
// so it leaves nothing behind when it lands.
//
// Lives in memory shared by the ranks of a node, with no pointers; changed only under the lock
// of the frame's shard.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>

#include "node/byte_ranges.h"

namespace stagio {

// A process that died but was not yet reaped still answers kill(); its locks are released by
// then, and what it claimed is taken over once its parent reaps it.
inline bool ProcessAlive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

class FrameFetches {
 public:
  static constexpr int kSlots = 4;
  static constexpr int kNoSlot = -1;

  void Clear() {
    for (Fetch& fetch : fetches_) fetch = Fetch{};
  }

  // True if any fetch is under way (its process possibly dead: see EndDead).
  bool busy() const {
    for (const Fetch& fetch : fetches_) {
      if (fetch.pid != 0) return true;
    }
    return false;
  }

  // Records a fetch of bytes [begin, end) by `pid`; its slot, or kNoSlot if all are taken.
  int Start(pid_t pid, uint32_t begin, uint32_t end) {
    for (int slot = 0; slot < kSlots; ++slot) {
      if (fetches_[slot].pid != 0) continue;
      fetches_[slot] = Fetch{static_cast<int32_t>(pid), begin, end, 0};
      return slot;
    }
    return kNoSlot;
  }

  // Ends the fetch in `slot`; true if it went stale on its way.
  bool End(int slot) {
    const bool stale = fetches_[slot].stale != 0;
    fetches_[slot] = Fetch{};
    return stale;
  }

  // Bytes of the frame were forgotten: every fetch under way may have read older ones.
  void MarkStale() {
    for (Fetch& fetch : fetches_) {
      if (fetch.pid != 0) fetch.stale = 1;
    }
  }

  // Ends the fetches whose process died, so that their bytes may be fetched again.
  void EndDead() {
    for (Fetch& fetch : fetches_) {
      if (fetch.pid != 0 && !ProcessAlive(fetch.pid)) fetch = Fetch{};
    }
  }

  // Whether the fetches under way by live processes bring every byte of [begin, end) missing
  // from `valid` (each gap within one fetch), or any of them.
  bool BringAll(const ByteRanges& valid, uint32_t begin, uint32_t end) const {
    bool all = true;
    valid.ForEachGap(begin, end, [&](uint32_t gap_begin, uint32_t gap_end) {
      if (!Brings(gap_begin, gap_end, /*whole=*/true)) all = false;
    });
    return all;
  }
  bool BringAny(const ByteRanges& valid, uint32_t begin, uint32_t end) const {
    bool any = false;
    valid.ForEachGap(begin, end, [&](uint32_t gap_begin, uint32_t gap_end) {
      if (Brings(gap_begin, gap_end, /*whole=*/false)) any = true;
    });
    return any;
  }

 private:
  struct Fetch {
    int32_t pid = 0;  // 0: the slot is free
    uint32_t begin = 0;
    uint32_t end = 0;  // exclusive
    uint8_t stale = 0;
  };

  // Whether a live fetch brings all (`whole`) or some of [begin, end).
  bool Brings(uint32_t begin, uint32_t end, bool whole) const {
    for (const Fetch& fetch : fetches_) {
      if (fetch.pid == 0) continue;
      const bool brings = whole ? fetch.begin <= begin && end <= fetch.end
                                : fetch.begin < end && begin < fetch.end;
      if (brings && ProcessAlive(fetch.pid)) return true;
    }
    return false;
  }

  Fetch fetches_[kSlots];
};

}  // namespace stagio
