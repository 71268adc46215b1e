// BlockRunReader: how a read with a known pattern takes the pieces it wants from this rank's
// cache (data_path.cc), a call's missing blocks fetched together.
//
// With a pattern known, a read that misses fetches whole blocks (FetchScope::kWholeBlock), the
// prefetchers' unit. Piece by piece, a call over n uncached blocks waits for n block-sized
// requests one after another, each paying storage's latency (and a round trip to stagio-iond,
// and on the daemon one storage request per block). The reader instead collects the pieces
// whose bytes are neither cached nor on their way into runs of consecutive blocks and reads
// each run with one ReadSpan: one storage request for all the run's missing bytes. Pieces whose
// bytes are cached (or being prefetched) are read at once, as are all pieces of a read that
// fetches only the bytes it asks for (FetchScope::kRequestedBytes).
//
// A run pins its blocks while it is read and is copied through a buffer of its size, so it
// spans at most a quarter of the cache that holds the file, and at most kMaxRunBytes (the
// largest request stagio-iond takes).
#pragma once

#include <cstdint>
#include <vector>

#include "cache/block_cache.h"
#include "cache/block_map.h"
#include "common/status.h"

namespace stagio {

// Where the pieces' bytes go: the application's buffer, addressed by stream offset.
class PieceDestination {
 public:
  virtual ~PieceDestination() = default;
  // The address of stream byte `stream_offset` if the buffer is contiguous, else null.
  virtual char* Contiguous(uint64_t stream_offset) const = 0;
  virtual void CopyIn(uint64_t stream_offset, uint64_t length, const char* bytes) const = 0;
};

class BlockRunReader {
 public:
  static constexpr uint64_t kMaxRunBytes = 16ull << 20;

  // For file `file_id` of the cache, with blocks of `block_size`.
  BlockRunReader(BlockCache& cache, uint64_t file_id, uint64_t block_size,
                 const PieceDestination& destination, FetchScope scope);

  // The piece (of a block this rank owns) that goes to stream byte `stream_offset`: read now if
  // its bytes are there, else added to the pending run, which is read first if the piece cannot
  // extend it. A run extends over pieces of its last block and of the next one.
  Status Add(const BlockPiece& piece, uint64_t stream_offset);
  // Reads the pending run. Call once all pieces are added.
  Status Finish();

 private:
  struct Pending {
    BlockPiece piece;
    uint64_t stream_offset;
  };
  bool Extends(const BlockPiece& piece) const;
  Status ReadRun();
  Status ReadOne(const BlockPiece& piece, uint64_t stream_offset);

  BlockCache& cache_;
  const uint64_t file_id_;
  const uint64_t block_size_;
  const PieceDestination& destination_;
  const FetchScope scope_;
  const uint64_t max_run_blocks_;
  std::vector<Pending> run_;
};

}  // namespace stagio
