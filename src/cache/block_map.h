// BlockMap: cuts file byte ranges into pieces of fixed-size blocks, the unit of caching.
#pragma once

#include <cstdint>

namespace stagio {

struct BlockPiece {
  uint64_t index;            // block number: file offset / block size
  uint64_t offset_in_block;  // first byte of the piece inside the block
  uint64_t length;           // bytes; never crosses the block's end
};

class BlockMap {
 public:
  explicit BlockMap(uint64_t block_size) : block_size_(block_size) {}

  uint64_t block_size() const { return block_size_; }
  uint64_t BlockStart(uint64_t index) const { return index * block_size_; }

  // Calls visit(BlockPiece) for each block piece of file bytes [offset, offset + length), in
  // file order. Stops early, returning false, if visit returns false.
  template <typename Visit>
  bool ForEachPiece(uint64_t offset, uint64_t length, Visit visit) const {
    while (length > 0) {
      BlockPiece piece;
      piece.index = offset / block_size_;
      piece.offset_in_block = offset % block_size_;
      piece.length = block_size_ - piece.offset_in_block;
      if (piece.length > length) piece.length = length;
      if (!visit(piece)) return false;
      offset += piece.length;
      length -= piece.length;
    }
    return true;
  }

 private:
  uint64_t block_size_;
};

}  // namespace stagio
