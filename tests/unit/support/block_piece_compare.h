// Comparison and printing of stagio::BlockPiece (a block index, an offset in the block and a
// length), for tests that check the pieces a range was cut into or the ranges a backend was
// asked to read. In namespace stagio, beside BlockPiece, so that EXPECT_EQ and gtest's printer
// find them by argument-dependent lookup.
#pragma once

#include <ostream>

#include "cache/block_map.h"

namespace stagio {

inline bool operator==(const BlockPiece& a, const BlockPiece& b) {
  return a.index == b.index && a.offset_in_block == b.offset_in_block && a.length == b.length;
}

inline std::ostream& operator<<(std::ostream& out, const BlockPiece& piece) {
  return out << "(block " << piece.index << ", " << piece.offset_in_block << ", "
             << piece.length << ")";
}

}  // namespace stagio
