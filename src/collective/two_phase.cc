#include "collective/two_phase.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "cache/block_map.h"
#include "common/log.h"
#include "collective/file_domains.h"
#include "mpiio/memory_layout.h"
#include "mpiio/polite_wait.h"
#include "mpiio/runtime.h"
#include "prefetch/prefetch_filter.h"

namespace stagio {

namespace {

// An exchange segment of a read starts with this flag: 1 if the aggregator could read the data.
using SegmentFlag = int64_t;
constexpr uint64_t kFlagBytes = sizeof(SegmentFlag);
// One exchange round moves at most this much through any rank, so int counts never overflow.
constexpr uint64_t kMaxRoundBytes = 1ull << 30;

using Piece = DomainPiece;
using Round = ExchangeRound;

uint64_t TotalLength(const std::vector<Piece>& pieces) {
  uint64_t total = 0;
  for (const Piece& piece : pieces) total += piece.block.length;
  return total;
}

int AsInt(uint64_t value) { return static_cast<int>(value); }

// Every rank's file extents for this call, in rank order. Most calls have a few extents per
// rank, so one allgather of a fixed-size record carries them all; only when a rank has more
// does a second one (allgatherv) follow. Each collective counts: with more ranks than cores,
// MPICH spends milliseconds in each.
constexpr size_t kInlineExtents = 4;

std::vector<std::vector<Extent>> GatherExtents(const OpenFile& file,
                                               const std::vector<Extent>& mine) {
  const size_t size = static_cast<size_t>(file.comm_size);
  constexpr size_t kRecord = 1 + 2 * kInlineExtents;  // count, then (offset, length) pairs
  std::vector<int64_t> record(kRecord, 0);
  record[0] = static_cast<int64_t>(mine.size());
  for (size_t i = 0; i < std::min(mine.size(), kInlineExtents); ++i) {
    record[1 + 2 * i] = mine[i].offset;
    record[2 + 2 * i] = static_cast<int64_t>(mine[i].length);
  }
  std::vector<int64_t> records(kRecord * size);
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallgather(record.data(), AsInt(kRecord), MPI_INT64_T, records.data(),
                           AsInt(kRecord), MPI_INT64_T, file.comm, request);
  });
  std::vector<int> pair_counts(size);
  bool all_inline = true;
  for (size_t rank = 0; rank < size; ++rank) {
    pair_counts[rank] = AsInt(records[rank * kRecord]);
    all_inline = all_inline && records[rank * kRecord] <= static_cast<int64_t>(kInlineExtents);
  }
  std::vector<int64_t> pairs;  // every rank's (offset, length) pairs, rank after rank
  std::vector<int> starts(size);
  if (all_inline) {
    for (size_t rank = 0; rank < size; ++rank) {
      starts[rank] = AsInt(pairs.size());
      const int64_t* first = records.data() + rank * kRecord + 1;
      pairs.insert(pairs.end(), first, first + 2 * pair_counts[rank]);
    }
  } else {
    std::vector<int64_t> my_pairs;
    for (const Extent& extent : mine) {
      my_pairs.push_back(extent.offset);
      my_pairs.push_back(static_cast<int64_t>(extent.length));
    }
    std::vector<int> counts(size);
    int total = 0;
    for (size_t rank = 0; rank < size; ++rank) {
      counts[rank] = 2 * pair_counts[rank];
      starts[rank] = total;
      total += counts[rank];
    }
    pairs.resize(static_cast<size_t>(total));
    CollectiveWithoutSpinning([&](MPI_Request* request) {
      return PMPI_Iallgatherv(my_pairs.data(), AsInt(my_pairs.size()), MPI_INT64_T,
                              pairs.data(), counts.data(), starts.data(), MPI_INT64_T, file.comm,
                              request);
    });
  }
  std::vector<std::vector<Extent>> all(size);
  for (size_t rank = 0; rank < size; ++rank) {
    const int64_t* pair = pairs.data() + starts[rank];
    for (int i = 0; i < pair_counts[rank]; ++i, pair += 2) {
      all[rank].push_back(Extent{pair[0], static_cast<uint64_t>(pair[1])});
    }
  }
  return all;
}

// The rounds of this call: stagio_cb_buffer_size bytes of blocks per aggregator each.
std::map<uint64_t, Round> RoundsOf(const OpenFile& file,
                                   const std::vector<std::vector<Extent>>& all) {
  const uint64_t block_size = file.backend->block_size();
  return PlanRounds(all, file.comm_rank, file.owners, block_size,
                    BlocksPerRound(block_size, file.owners.aggregators().size(),
                                   file.settings.cb_buffer_size, kMaxRoundBytes));
}

// Counts and displacements of one Alltoallv, from the bytes for each peer.
struct ExchangeLayout {
  std::vector<int> counts;
  std::vector<int> displacements;
  uint64_t total = 0;

  explicit ExchangeLayout(const std::vector<uint64_t>& bytes_per_peer) {
    for (uint64_t bytes : bytes_per_peer) {
      counts.push_back(AsInt(bytes));
      displacements.push_back(AsInt(total));
      total += bytes;
    }
  }
};

Status Exchange(const OpenFile& file, const std::vector<uint64_t>& send_bytes,
                const std::vector<char>& send, const std::vector<uint64_t>& receive_bytes,
                std::vector<char>* receive) {
  const ExchangeLayout out(send_bytes);
  const ExchangeLayout in(receive_bytes);
  receive->resize(in.total);
  const int rc = CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Ialltoallv(send.data(), out.counts.data(), out.displacements.data(), MPI_BYTE,
                           receive->data(), in.counts.data(), in.displacements.data(), MPI_BYTE,
                           file.comm, request);
  });
  uint64_t to_others = out.total - send_bytes[static_cast<size_t>(file.comm_rank)];
  file.backend->stats()->Add(Counter::exchanged_bytes, to_others);
  if (rc != MPI_SUCCESS) return Status::IOError("the two-phase exchange failed in MPI");
  return Status::OK();
}

// The aggregator's part of a read round: fetch what its blocks miss, run by run, and pack each
// rank's pieces behind a flag saying whether they could be read.
void PackReadRound(Runtime& runtime, const OpenFile& file, const Round& round,
                   std::vector<uint64_t>* send_bytes, std::vector<char>* send) {
  BlockCache& cache = runtime.cache();
  Status fetched;
  for (const BlockRun& run : ContiguousRuns(DistinctBlocks(round.from_rank), UINT64_MAX)) {
    Status status = cache.FetchBlocks(file.id, run.first, run.count);
    if (fetched.ok()) fetched = status;
  }
  if (!fetched.ok()) {
    LogError("two-phase read of " + file.path + ": " + fetched.ToString());
  }
  for (int rank = 0; rank < file.comm_size; ++rank) {
    const std::vector<Piece>& pieces = round.from_rank[rank];
    if (pieces.empty()) {
      send_bytes->push_back(0);
      continue;
    }
    send_bytes->push_back(kFlagBytes + TotalLength(pieces));
    const size_t flag_at = send->size();
    send->resize(flag_at + send_bytes->back());
    SegmentFlag readable = fetched.ok() ? 1 : 0;
    char* out = send->data() + flag_at + kFlagBytes;
    for (const Piece& piece : pieces) {
      if (!readable) break;
      Status status = cache.Read(file.id, piece.block.index, piece.block.offset_in_block,
                                 piece.block.length, out);
      if (!status.ok()) {
        LogError("two-phase read of " + file.path + ": " + status.ToString());
        readable = 0;
      }
      out += piece.block.length;
    }
    std::memcpy(send->data() + flag_at, &readable, kFlagBytes);
  }
}

Status ReadRound(Runtime& runtime, const OpenFile& file, const Round& round,
                 const MemoryLayout& memory) {
  std::vector<uint64_t> send_bytes;
  std::vector<char> send;
  PackReadRound(runtime, file, round, &send_bytes, &send);
  std::vector<uint64_t> receive_bytes;
  for (const std::vector<Piece>& pieces : round.to_owner) {
    receive_bytes.push_back(pieces.empty() ? 0 : kFlagBytes + TotalLength(pieces));
  }
  std::vector<char> receive;
  Status status = Exchange(file, send_bytes, send, receive_bytes, &receive);
  if (!status.ok()) return status;
  const char* in = receive.data();
  for (int owner = 0; owner < file.comm_size; ++owner) {
    const std::vector<Piece>& pieces = round.to_owner[owner];
    if (pieces.empty()) continue;
    SegmentFlag readable = 0;
    std::memcpy(&readable, in, kFlagBytes);
    in += kFlagBytes;
    if (!readable && status.ok()) {
      status = Status::IOError("rank " + std::to_string(owner) +
                               " could not read its blocks of " + file.path +
                               " from storage (its log says why)");
    }
    for (const Piece& piece : pieces) {
      if (readable) memory.CopyIn(piece.stream_offset, piece.block.length, in);
      in += piece.block.length;
    }
  }
  return status;
}

Status WriteRound(Runtime& runtime, const OpenFile& file, const Round& round,
                  const MemoryLayout& memory) {
  std::vector<uint64_t> send_bytes;
  std::vector<char> send;
  for (const std::vector<Piece>& pieces : round.to_owner) {
    send_bytes.push_back(TotalLength(pieces));
    for (const Piece& piece : pieces) {
      const size_t at = send.size();
      send.resize(at + piece.block.length);
      memory.CopyOut(piece.stream_offset, piece.block.length, send.data() + at);
    }
  }
  std::vector<uint64_t> receive_bytes;
  for (const std::vector<Piece>& pieces : round.from_rank) {
    receive_bytes.push_back(TotalLength(pieces));
  }
  std::vector<char> receive;
  Status status = Exchange(file, send_bytes, send, receive_bytes, &receive);
  if (!status.ok()) return status;
  // Ranks in order: overlapping writes of one collective call end as the highest rank's, one
  // of the outcomes MPI allows.
  const char* in = receive.data();
  for (const std::vector<Piece>& pieces : round.from_rank) {
    for (const Piece& piece : pieces) {
      Status written = runtime.cache().Write(file.id, piece.block.index,
                                             piece.block.offset_in_block, piece.block.length, in);
      if (status.ok()) status = written;
      in += piece.block.length;
    }
  }
  return status;
}

// Collective prefetching at an aggregator (seed 000, Fig. 5, steps 1-5): every rank's access in
// this call feeds that rank's history; the predictions of all ranks are filtered (duplicates,
// blocks this call reads anyway, other aggregators' blocks, blocks cached or in flight) and
// what is left goes to the I/O thread in runs of consecutive blocks, one storage request each.
void PlanCollectivePrefetch(Runtime& runtime, OpenFile& file,
                            const std::vector<std::vector<Extent>>& all,
                            const std::vector<uint64_t>& demanded) {
  if (!file.owners.IsAggregator(file.comm_rank)) return;
  std::vector<Access> spans;
  for (const std::vector<Extent>& extents : all) {
    if (extents.empty()) {
      spans.push_back(Access{});
      continue;
    }
    const uint64_t first = static_cast<uint64_t>(extents.front().offset);
    spans.push_back(Access{first, extents.back().offset + extents.back().length - first});
  }
  std::vector<std::vector<uint64_t>> proposals =
      file.backend->collective_prefetcher().Propose(spans, file.backend->known_size());
  BlockCache& cache = runtime.cache();
  FilteredProposals filtered = FilterProposals(
      proposals, demanded,
      [&file](uint64_t index) { return file.owners.OwnerOf(index) == file.comm_rank; },
      [&cache, &file](uint64_t index) { return cache.Contains(file.id, index); });
  file.backend->stats()->Add(Counter::prefetch_redundant, filtered.redundant());
  file.backend->stats()->Add(Counter::prefetch_already_cached, filtered.cached);
  // Refill in large runs: while less than half of the blocks ahead are missing, wait for a
  // later call. Each refill then covers at least half the window, consecutive blocks in one
  // storage request, instead of one block at the front of the window per call.
  if (filtered.blocks.size() * 2 < filtered.blocks.size() + filtered.cached) return;
  // Every rank's depth adds up here: keep the plan to half the cache, nearest blocks first, or
  // prefetches would evict each other before they are read.
  const uint64_t budget = std::max<uint64_t>(1, cache.capacity() / 2 / file.backend->block_size());
  if (filtered.blocks.size() > budget) filtered.blocks.resize(budget);
  const uint64_t max_run =
      std::max<uint64_t>(1, file.settings.prefetch_max / file.backend->block_size());
  const uint64_t epoch = cache.InvalidationEpoch(file.id);
  for (const BlockRun& run : ContiguousRuns(filtered.blocks, max_run)) {
    runtime.io_thread().Enqueue(PrefetchJob{file.id, run.first, epoch, run.count});
  }
}

}  // namespace

Status TwoPhaseRead(Runtime& runtime, OpenFile& file, const Transfer& transfer,
                    bool collective_prefetch, uint64_t* bytes_read) {
  *bytes_read = 0;
  std::vector<Extent> mine;
  const uint64_t readable = ReadableExtents(file, transfer, &mine);
  const std::vector<std::vector<Extent>> all = GatherExtents(file, mine);
  const MemoryLayout memory(transfer);
  Status status;
  std::vector<uint64_t> demanded;
  for (const auto& [window, round] : RoundsOf(file, all)) {
    Status round_status = ReadRound(runtime, file, round, memory);
    if (status.ok()) status = round_status;
    if (collective_prefetch) {
      const std::vector<uint64_t> blocks = DistinctBlocks(round.from_rank);
      demanded.insert(demanded.end(), blocks.begin(), blocks.end());
    }
  }
  if (collective_prefetch) PlanCollectivePrefetch(runtime, file, all, demanded);
  if (status.ok()) *bytes_read = readable;
  return status;
}

Status TwoPhaseWrite(Runtime& runtime, OpenFile& file, const Transfer& transfer) {
  const uint64_t total = TransferBytes(transfer.count, transfer.datatype);
  std::vector<Extent> mine;
  if (total > 0) file.view.MapStreamRange(transfer.stream_begin, total, &mine);
  const std::vector<std::vector<Extent>> all = GatherExtents(file, mine);
  const MemoryLayout memory(transfer);
  Status status;
  for (const auto& [window, round] : RoundsOf(file, all)) {
    Status round_status = WriteRound(runtime, file, round, memory);
    if (status.ok()) status = round_status;
  }
  runtime.io_thread().Notify();
  // No rank may leave before every owner has put its bytes in the cache: its next independent
  // write of the same bytes would reach the owner's server first and be overwritten by this
  // older one. Agreeing on the outcome is that wait, and tells every rank of a failure.
  int failed = status.ok() ? 0 : 1;
  CollectiveWithoutSpinning([&](MPI_Request* request) {
    return PMPI_Iallreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, file.comm, request);
  });
  if (failed && status.ok()) {
    status = Status::IOError("another rank failed in the collective write of " + file.path);
  }
  if (!mine.empty()) {
    file.backend->GrowKnownSize(static_cast<uint64_t>(mine.back().offset) + mine.back().length);
  }
  return status;
}

}  // namespace stagio
