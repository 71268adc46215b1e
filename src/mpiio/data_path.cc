#include "mpiio/data_path.h"

#include <cstring>
#include <vector>

#include "cache/block_cache.h"
#include "cache/block_map.h"
#include "mpiio/flatten.h"

namespace stagio {

namespace {

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

// Stream bytes [0, readable) of `extents` that lie before `file_size`: MPI reads stop at end of
// file, and a view's stream is in file order, so the readable part is a prefix.
uint64_t ReadablePrefix(const std::vector<Extent>& extents, uint64_t file_size) {
  uint64_t readable = 0;
  for (const Extent& extent : extents) {
    const uint64_t begin = static_cast<uint64_t>(extent.offset);
    if (begin >= file_size) break;
    const uint64_t available = file_size - begin;
    if (available < extent.length) return readable + available;
    readable += extent.length;
  }
  return readable;
}

// Calls visit(piece, stream_offset) for every block piece of the first `length` stream bytes of
// `extents`, in stream order; stops at the first error.
template <typename Visit>
Status ForEachBlockPiece(const std::vector<Extent>& extents, uint64_t length,
                         uint64_t block_size, Visit visit) {
  const BlockMap map(block_size);
  uint64_t stream_offset = 0;
  Status status;
  for (const Extent& extent : extents) {
    if (stream_offset >= length) break;
    const uint64_t take = std::min<uint64_t>(extent.length, length - stream_offset);
    map.ForEachPiece(static_cast<uint64_t>(extent.offset), take, [&](const BlockPiece& piece) {
      status = visit(piece, stream_offset);
      stream_offset += piece.length;
      return status.ok();
    });
    if (!status.ok()) break;
  }
  return status;
}

std::vector<char>& ScratchBuffer(uint64_t size) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < size) scratch.resize(size);
  return scratch;
}

}  // namespace

uint64_t TransferBytes(MPI_Count count, MPI_Datatype datatype) {
  MPI_Count type_size = 0;
  PMPI_Type_size_x(datatype, &type_size);
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(type_size);
}

Status ReadThroughCache(BlockCache& cache, OpenFile& file, const Transfer& transfer,
                        FetchScope scope, uint64_t* bytes_read) {
  *bytes_read = 0;
  const uint64_t total = TransferBytes(transfer.count, transfer.datatype);
  if (total == 0) return Status::OK();
  std::vector<Extent> extents;
  file.view.MapStreamRange(transfer.stream_begin, total, &extents);
  uint64_t readable = ReadablePrefix(extents, file.backend->known_size());
  if (readable < total) {
    // The size stagio knows may be stale: a nonblocking write passed to PMPI grows the file
    // only when it completes, after stagio last looked. One look at storage, only for reads
    // that reach the end of file. If the look fails, the known size is the best there is.
    file.backend->RefreshKnownSize();
    readable = ReadablePrefix(extents, file.backend->known_size());
  }
  const MemoryLayout memory(transfer);
  if (scope == FetchScope::kRequestedBytes && memory.contiguous()) {
    // Each contiguous piece of the file in one storage request, whatever blocks it crosses.
    Status status;
    uint64_t stream_offset = 0;
    for (const Extent& extent : extents) {
      if (stream_offset >= readable || !status.ok()) break;
      const uint64_t take = std::min<uint64_t>(extent.length, readable - stream_offset);
      status = cache.ReadSpan(file.id, static_cast<uint64_t>(extent.offset), take,
                              memory.Address(stream_offset));
      stream_offset += take;
    }
    if (status.ok()) *bytes_read = readable;
    return status;
  }
  const uint64_t block_size = file.backend->block_size();
  Status status = ForEachBlockPiece(
      extents, readable, block_size, [&](const BlockPiece& piece, uint64_t stream_offset) {
        if (memory.contiguous()) {
          return cache.Read(file.id, piece.index, piece.offset_in_block, piece.length,
                            memory.Address(stream_offset), scope);
        }
        char* scratch = ScratchBuffer(piece.length).data();
        Status read = cache.Read(file.id, piece.index, piece.offset_in_block, piece.length,
                                 scratch, scope);
        if (read.ok()) memory.Scatter(stream_offset, piece.length, scratch);
        return read;
      });
  if (status.ok()) *bytes_read = readable;
  return status;
}

Status WriteThroughCache(BlockCache& cache, OpenFile& file, const Transfer& transfer) {
  const uint64_t total = TransferBytes(transfer.count, transfer.datatype);
  if (total == 0) return Status::OK();
  std::vector<Extent> extents;
  file.view.MapStreamRange(transfer.stream_begin, total, &extents);
  const MemoryLayout memory(transfer);
  Status status = ForEachBlockPiece(
      extents, total, file.backend->block_size(),
      [&](const BlockPiece& piece, uint64_t stream_offset) {
        if (memory.contiguous()) {
          return cache.Write(file.id, piece.index, piece.offset_in_block, piece.length,
                             memory.Address(stream_offset));
        }
        char* scratch = ScratchBuffer(piece.length).data();
        memory.Gather(stream_offset, piece.length, scratch);
        return cache.Write(file.id, piece.index, piece.offset_in_block, piece.length, scratch);
      });
  if (!extents.empty()) {
    const Extent& last = extents.back();
    file.backend->GrowKnownSize(static_cast<uint64_t>(last.offset) + last.length);
  }
  return status;
}

}  // namespace stagio
