#include "mpiio/block_run_reader.h"

#include <algorithm>

#include "mpiio/scratch_buffer.h"

namespace stagio {
namespace {

uint64_t MaxRunBlocks(BlockCache& cache, uint64_t file_id, uint64_t block_size) {
  const uint64_t bytes = std::min(BlockRunReader::kMaxRunBytes, cache.CapacityFor(file_id) / 4);
  return std::max<uint64_t>(1, bytes / block_size);
}

}  // namespace

BlockRunReader::BlockRunReader(BlockCache& cache, uint64_t file_id, uint64_t block_size,
                               const PieceDestination& destination, FetchScope scope)
    : cache_(cache),
      file_id_(file_id),
      block_size_(block_size),
      destination_(destination),
      scope_(scope),
      max_run_blocks_(MaxRunBlocks(cache, file_id, block_size)) {}

Status BlockRunReader::Add(const BlockPiece& piece, uint64_t stream_offset) {
  if (scope_ == FetchScope::kRequestedBytes) return ReadOne(piece, stream_offset);
  // A block some of whose bytes are cached (written, or fetched for another read) is a miss
  // only if this piece's bytes are among the missing ones.
  const bool pending_block = !run_.empty() && run_.back().piece.index == piece.index;
  if (!pending_block && cache_.Contains(file_id_, piece.index, piece.offset_in_block,
                                        piece.offset_in_block + piece.length)) {
    return ReadOne(piece, stream_offset);
  }
  if (!Extends(piece)) {
    Status status = ReadRun();
    if (!status.ok()) return status;
  }
  run_.push_back({piece, stream_offset});
  return Status::OK();
}

Status BlockRunReader::Finish() { return ReadRun(); }

bool BlockRunReader::Extends(const BlockPiece& piece) const {
  if (run_.empty()) return true;
  const uint64_t first = run_.front().piece.index;
  const uint64_t last = run_.back().piece.index;
  return (piece.index == last || piece.index == last + 1) &&
         piece.index - first < max_run_blocks_;
}

Status BlockRunReader::ReadRun() {
  if (run_.empty()) return Status::OK();
  if (run_.front().piece.index == run_.back().piece.index) {
    // One block: each piece as a miss reads it, the first fetching the whole block.
    Status status;
    for (const Pending& pending : run_) {
      status = ReadOne(pending.piece, pending.stream_offset);
      if (!status.ok()) break;
    }
    run_.clear();
    return status;
  }
  // Whole blocks, as a miss with a pattern fetches them. The last block of the file too: storage
  // returns what it has and the rest reads as zeros, as for a miss, so the block ends up whole
  // and later reads (and Contains) find it.
  const uint64_t begin = run_.front().piece.index * block_size_;
  const uint64_t end = (run_.back().piece.index + 1) * block_size_;
  std::vector<char>& buffer = ScratchBuffer(end - begin);
  Status status = cache_.ReadSpan(file_id_, begin, end - begin, buffer.data());
  if (status.ok()) {
    for (const Pending& pending : run_) {
      const uint64_t at = pending.piece.index * block_size_ + pending.piece.offset_in_block;
      destination_.CopyIn(pending.stream_offset, pending.piece.length,
                          buffer.data() + (at - begin));
    }
  }
  run_.clear();
  return status;
}

Status BlockRunReader::ReadOne(const BlockPiece& piece, uint64_t stream_offset) {
  if (char* address = destination_.Contiguous(stream_offset)) {
    return cache_.Read(file_id_, piece.index, piece.offset_in_block, piece.length, address,
                       scope_);
  }
  std::vector<char>& buffer = ScratchBuffer(piece.length);
  Status status = cache_.Read(file_id_, piece.index, piece.offset_in_block, piece.length,
                              buffer.data(), scope_);
  if (status.ok()) destination_.CopyIn(stream_offset, piece.length, buffer.data());
  return status;
}

}  // namespace stagio
