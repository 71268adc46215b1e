// MemoryLayout: where the stream bytes of an access live in the application's buffer.
#pragma once

#include <cstring>
#include <memory>

#include "mpiio/data_path.h"
#include "mpiio/flatten.h"

namespace stagio {

// Where the stream bytes of the application's buffer live. A contiguous memory type is the
// common case and needs no staging copy; any other type goes through a scratch buffer one block
// piece at a time.
class MemoryLayout {
 public:
  explicit MemoryLayout(const Transfer& transfer)
      : transfer_(transfer),
        flat_(Flatten(transfer.datatype)),
        contiguous_(flat_->contiguous() ||
                    (transfer.count <= 1 && flat_->extents.size() == 1)) {}

  bool contiguous() const { return contiguous_; }
  // Address of stream byte `stream_offset` (relative to the start of this transfer); valid only
  // when contiguous().
  char* Address(uint64_t stream_offset) const {
    return transfer_.buffer + flat_->extents.front().offset + stream_offset;
  }
  // Copies `length` bytes from `in` to stream bytes [stream_offset, + length), whatever the
  // layout.
  void CopyIn(uint64_t stream_offset, uint64_t length, const char* in) const {
    if (contiguous_) {
      std::memcpy(Address(stream_offset), in, length);
    } else {
      Scatter(stream_offset, length, in);
    }
  }
  // Copies stream bytes [stream_offset, + length) to `out`, whatever the layout.
  void CopyOut(uint64_t stream_offset, uint64_t length, char* out) const {
    if (contiguous_) {
      std::memcpy(out, Address(stream_offset), length);
    } else {
      Gather(stream_offset, length, out);
    }
  }
  // Copies `length` stream bytes starting at `stream_offset` from the buffer into `out`.
  void Gather(uint64_t stream_offset, uint64_t length, char* out) const {
    ForEachMemoryPiece(transfer_.buffer, *flat_, transfer_.count, stream_offset, length,
                       [&out](char* piece, uint64_t piece_length) {
                         std::memcpy(out, piece, piece_length);
                         out += piece_length;
                       });
  }
  // Copies `length` bytes from `in` into the buffer at stream bytes from `stream_offset` on.
  void Scatter(uint64_t stream_offset, uint64_t length, const char* in) const {
    ForEachMemoryPiece(transfer_.buffer, *flat_, transfer_.count, stream_offset, length,
                       [&in](char* piece, uint64_t piece_length) {
                         std::memcpy(piece, in, piece_length);
                         in += piece_length;
                       });
  }

 private:
  const Transfer& transfer_;
  std::shared_ptr<const FlatType> flat_;
  bool contiguous_;
};

}  // namespace stagio
