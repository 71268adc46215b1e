#include "mpiio/data_path.h"

#include <cstring>
#include <vector>

#include "cache/block_cache.h"
#include "cache/block_map.h"
#include "mpiio/block_run_reader.h"
#include "mpiio/flatten.h"
#include "mpiio/memory_layout.h"
#include "mpiio/scratch_buffer.h"
#include "collective/remote_blocks.h"
#include "mpiio/sieve.h"

namespace stagio {

namespace {

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

}  // namespace

uint64_t CutAtEndOfFile(uint64_t end_of_file, std::vector<Extent>* extents) {
  const uint64_t readable = ReadablePrefix(*extents, end_of_file);
  uint64_t kept = 0;
  size_t count = 0;
  for (; count < extents->size() && kept < readable; ++count) {
    Extent& extent = (*extents)[count];
    extent.length = std::min<uint64_t>(extent.length, readable - kept);
    kept += extent.length;
  }
  extents->resize(count);
  return readable;
}

namespace {

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

// In collective-cache mode, the pieces other ranks own (other nodes' ranks, on the node cache):
// queued per owner and sent before this rank serves its own pieces, so that the owners work
// meanwhile. Per-rank caching owns all.
bool OwnedHere(const OpenFile& file, const BlockPiece& piece) {
  return !file.collective() || file.owners.LocalTo(piece.index, file.comm_rank);
}

// The application's buffer as the block run reader fills it.
class BufferDestination : public PieceDestination {
 public:
  explicit BufferDestination(const MemoryLayout& memory) : memory_(memory) {}
  char* Contiguous(uint64_t stream_offset) const override {
    return memory_.contiguous() ? memory_.Address(stream_offset) : nullptr;
  }
  void CopyIn(uint64_t stream_offset, uint64_t length, const char* bytes) const override {
    memory_.CopyIn(stream_offset, length, bytes);
  }

 private:
  const MemoryLayout& memory_;
};

}  // namespace

uint64_t TransferBytes(MPI_Count count, MPI_Datatype datatype) {
  MPI_Count type_size = 0;
  PMPI_Type_size_x(datatype, &type_size);
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(type_size);
}

uint64_t ReadableExtents(OpenFile& file, const Transfer& transfer, std::vector<Extent>* extents) {
  const uint64_t total = TransferBytes(transfer.count, transfer.datatype);
  extents->clear();
  if (total == 0) return 0;
  file.view.MapStreamRange(transfer.stream_begin, total, extents);
  uint64_t end_of_file = file.backend->known_size();
  if (ReadablePrefix(*extents, end_of_file) < total) {
    // The size stagio knows may be stale: a nonblocking write passed to PMPI grows the file
    // only when it completes, after stagio last looked. One look at storage, only for reads
    // that reach the end of file. If the look fails, the known size is the best there is.
    file.backend->RefreshKnownSize();
    end_of_file = file.backend->known_size();
  }
  return CutAtEndOfFile(end_of_file, extents);
}

// Reads the extents into the buffer through the cache, fetching only the missing bytes of each
// sieved span (sieve.h), in one storage request per span (BlockCache::ReadSpan): a read without
// a known pattern costs what it costs ROMIO, which sieves too.
Status ReadSieved(BlockCache& cache, const OpenFile& file, const MemoryLayout& memory,
                  const std::vector<Extent>& extents) {
  Status status;
  uint64_t stream_offset = 0;
  ForEachSievedSpan(extents, [&](size_t first, size_t last, uint64_t begin, uint64_t end) {
    if (!status.ok()) return;
    if (last == first + 1 && memory.contiguous()) {
      // One extent into a contiguous buffer: straight in.
      status = cache.ReadSpan(file.id, begin, end - begin, memory.Address(stream_offset));
      stream_offset += end - begin;
      return;
    }
    std::vector<char>& span = ScratchBuffer(end - begin);
    status = cache.ReadSpan(file.id, begin, end - begin, span.data());
    if (!status.ok()) return;
    for (size_t i = first; i < last; ++i) {
      const uint64_t at = static_cast<uint64_t>(extents[i].offset) - begin;
      memory.CopyIn(stream_offset, extents[i].length, span.data() + at);
      stream_offset += extents[i].length;
    }
  });
  return status;
}

Status ReadThroughCache(BlockCache& cache, OpenFile& file, const Transfer& transfer,
                        FetchScope scope, uint64_t* bytes_read) {
  *bytes_read = 0;
  std::vector<Extent> extents;
  const uint64_t readable = ReadableExtents(file, transfer, &extents);
  if (readable == 0) return Status::OK();
  const MemoryLayout memory(transfer);
  // Without a pattern, a read costs what it costs without stagio: the bytes asked for, one
  // request per sieved span, whoever owns the blocks. Other owners are asked only while they
  // may hold this rank's own unwritten bytes (a rank sees its own writes); other ranks' bytes
  // need not be seen before sync-barrier-sync, after which storage has them. A pre-execution
  // helper's reads also count as having no pattern, but its hints bring the blocks to their
  // owners, which must then serve them.
  if (scope == FetchScope::kRequestedBytes &&
      (!file.collective() ||
       (!file.wrote_to_owners.load() && file.preexec_helpers.load() == 0))) {
    Status status = ReadSieved(cache, file, memory, extents);
    if (status.ok()) *bytes_read = readable;
    return status;
  }
  const uint64_t block_size = file.backend->block_size();
  RemotePieces remote(file.comm, file.backend->stats());
  if (file.collective()) {
    ForEachBlockPiece(extents, readable, block_size,
                      [&](const BlockPiece& piece, uint64_t stream_offset) {
                        if (!OwnedHere(file, piece)) {
                          remote.AddRead(file.owners.OwnerOf(piece.index), piece, stream_offset);
                        }
                        return Status::OK();
                      });
    remote.Start(BlockOp::kRead, scope);
  }
  const BufferDestination buffer(memory);
  BlockRunReader local(cache, file.id, block_size, buffer, scope);
  Status status = ForEachBlockPiece(
      extents, readable, block_size, [&](const BlockPiece& piece, uint64_t stream_offset) {
        if (!OwnedHere(file, piece)) return Status::OK();
        return local.Add(piece, stream_offset);
      });
  if (status.ok()) status = local.Finish();
  Status remote_status = remote.Finish(
      [&](uint64_t stream_offset, uint64_t length, const char* bytes) {
        memory.CopyIn(stream_offset, length, bytes);
      });
  if (status.ok()) status = remote_status;
  if (status.ok()) *bytes_read = readable;
  return status;
}

Status WriteThroughCache(BlockCache& cache, OpenFile& file, const Transfer& transfer) {
  const uint64_t total = TransferBytes(transfer.count, transfer.datatype);
  if (total == 0) return Status::OK();
  std::vector<Extent> extents;
  file.view.MapStreamRange(transfer.stream_begin, total, &extents);
  const MemoryLayout memory(transfer);
  const uint64_t block_size = file.backend->block_size();
  RemotePieces remote(file.comm, file.backend->stats());
  if (file.collective()) {
    ForEachBlockPiece(extents, total, block_size,
                      [&](const BlockPiece& piece, uint64_t stream_offset) {
                        if (OwnedHere(file, piece)) return Status::OK();
                        file.wrote_to_owners.store(true);
                        char* scratch = ScratchBuffer(piece.length).data();
                        memory.CopyOut(stream_offset, piece.length, scratch);
                        remote.AddWrite(file.owners.OwnerOf(piece.index), piece, scratch);
                        return Status::OK();
                      });
    remote.Start(BlockOp::kWrite, FetchScope::kWholeBlock);
  }
  Status status = ForEachBlockPiece(
      extents, total, block_size, [&](const BlockPiece& piece, uint64_t stream_offset) {
        if (!OwnedHere(file, piece)) return Status::OK();
        if (memory.contiguous()) {
          return cache.Write(file.id, piece.index, piece.offset_in_block, piece.length,
                             memory.Address(stream_offset));
        }
        char* scratch = ScratchBuffer(piece.length).data();
        memory.Gather(stream_offset, piece.length, scratch);
        return cache.Write(file.id, piece.index, piece.offset_in_block, piece.length, scratch);
      });
  Status remote_status = remote.Finish([](uint64_t, uint64_t, const char*) {});
  if (status.ok()) status = remote_status;
  if (!extents.empty()) {
    const Extent& last = extents.back();
    file.backend->GrowKnownSize(static_cast<uint64_t>(last.offset) + last.length);
  }
  return status;
}

}  // namespace stagio
