// BlockHomes: which I/O-node daemon is the home of each file block (seed 004, Fig. 5).
//
// Blocks are dealt round-robin to the client's aggregators (block b to aggregator b mod A),
// and the aggregators are split into D consecutive groups, one per daemon, as compute nodes
// are grouped into psets, each with its I/O node. So aggregator a's blocks live on daemon
// a * D / A, every block has exactly one home, and a daemon sees all the blocks of the
// aggregators it serves: what lets it prefetch "the next blocks of the same aggregator".
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace stagio {

struct BlockHomes {
  uint64_t block_size = 1 << 20;
  uint64_t aggregators = 1;
  size_t daemons = 1;

  size_t HomeOf(uint64_t block) const {
    const uint64_t aggregator = block % std::max<uint64_t>(aggregators, 1);
    return static_cast<size_t>(aggregator * daemons / std::max<uint64_t>(aggregators, 1));
  }

  // Calls visit(home, offset, length) for the pieces of bytes [offset, offset + length): each
  // piece lies in consecutive blocks with the same home and holds at most `max_piece` bytes.
  template <typename Visit>
  void ForEachPiece(uint64_t offset, uint64_t length, uint64_t max_piece, Visit&& visit) const {
    const uint64_t end = offset + length;
    while (offset < end) {
      const size_t home = HomeOf(offset / block_size);
      uint64_t piece_end = offset;
      // Extend block by block while the next block has the same home.
      while (piece_end < end && piece_end - offset < max_piece &&
             HomeOf(piece_end / block_size) == home) {
        piece_end = std::min(end, (piece_end / block_size + 1) * block_size);
      }
      piece_end = std::min(piece_end, offset + max_piece);
      visit(home, offset, piece_end - offset);
      offset = piece_end;
    }
  }
};

}  // namespace stagio
