#include "mpiio/remote_blocks.h"

#include <atomic>
#include <cstring>
#include <string>

#include "mpiio/polite_wait.h"

namespace stagio {

namespace {

std::vector<char> EncodeRequest(BlockOp op, int reply_tag, bool whole_blocks,
                                const std::vector<WirePiece>& pieces,
                                const std::vector<char>& payload) {
  RequestHeader header;
  header.op = static_cast<uint32_t>(op);
  header.piece_count = static_cast<uint32_t>(pieces.size());
  header.reply_tag = reply_tag;
  header.whole_blocks = whole_blocks ? 1 : 0;
  const size_t pieces_bytes = pieces.size() * sizeof(WirePiece);
  std::vector<char> message(sizeof header + pieces_bytes + payload.size());
  std::memcpy(message.data(), &header, sizeof header);
  if (!pieces.empty()) std::memcpy(message.data() + sizeof header, pieces.data(), pieces_bytes);
  if (!payload.empty()) {
    std::memcpy(message.data() + sizeof header + pieces_bytes, payload.data(), payload.size());
  }
  return message;
}

// The owner's answer as a Status; `reply` holds at least a header (receives are sized for one).
Status DecodeReply(const std::vector<char>& reply, int received, int owner) {
  ReplyHeader header;
  if (received < static_cast<int>(sizeof header)) {
    return Status::IOError("rank " + std::to_string(owner) + " sent a truncated reply");
  }
  std::memcpy(&header, reply.data(), sizeof header);
  if (header.ok) return Status::OK();
  const size_t length = std::min<size_t>(header.message_length,
                                         static_cast<size_t>(received) - sizeof header);
  return Status::IOError("rank " + std::to_string(owner) + ", which caches the block: " +
                         std::string(reply.data() + sizeof header, length));
}

int Bytes(size_t size) { return static_cast<int>(size); }

}  // namespace

int NextReplyTag() {
  static std::atomic<unsigned> next{0};
  return kFirstReplyTag + static_cast<int>(next.fetch_add(1) % kReplyTagCount);
}

RemotePieces::~RemotePieces() {
  for (auto& [owner, batch] : batches_) PMPI_Waitall(2, batch.requests, MPI_STATUSES_IGNORE);
}

void RemotePieces::AddRead(int owner, const BlockPiece& piece, uint64_t destination) {
  Batch& batch = batches_[owner];
  batch.pieces.push_back(WirePiece{piece.index, piece.offset_in_block, piece.length});
  batch.destinations.push_back(destination);
}

void RemotePieces::AddWrite(int owner, const BlockPiece& piece, const char* bytes) {
  Batch& batch = batches_[owner];
  batch.pieces.push_back(WirePiece{piece.index, piece.offset_in_block, piece.length});
  batch.payload.insert(batch.payload.end(), bytes, bytes + piece.length);
}

void RemotePieces::Start(BlockOp op, FetchScope scope) {
  for (auto& [owner, batch] : batches_) {
    uint64_t read_bytes = 0;
    if (op == BlockOp::kRead) {
      for (const WirePiece& piece : batch.pieces) read_bytes += piece.length;
    }
    // Room for the data, or for an error text if that is longer.
    batch.reply.resize(sizeof(ReplyHeader) + std::max<uint64_t>(read_bytes, kMaxReplyMessage));
    const int tag = NextReplyTag();
    // The receive goes first, so the owner's reply never waits for this rank to post it.
    PMPI_Irecv(batch.reply.data(), Bytes(batch.reply.size()), MPI_BYTE, owner, tag, comm_,
               &batch.requests[1]);
    batch.request = EncodeRequest(op, tag, scope == FetchScope::kWholeBlock, batch.pieces,
                                  batch.payload);
    PMPI_Isend(batch.request.data(), Bytes(batch.request.size()), MPI_BYTE, owner,
               kBlockRequestTag, comm_, &batch.requests[0]);
    stats_->Add(Counter::remote_requests, 1);
    stats_->Add(Counter::exchanged_bytes, batch.payload.size());
  }
}

Status RemotePieces::Finish(Deliver deliver) {
  Status first_failure;
  for (auto& [owner, batch] : batches_) {
    MPI_Status statuses[2];
    WaitWithoutSpinning(2, batch.requests, statuses);
    int received = 0;
    PMPI_Get_count(&statuses[1], MPI_BYTE, &received);
    Status status = DecodeReply(batch.reply, received, owner);
    if (!status.ok()) {
      if (first_failure.ok()) first_failure = status;
      continue;
    }
    if (batch.destinations.empty()) continue;
    const char* bytes = batch.reply.data() + sizeof(ReplyHeader);
    for (size_t i = 0; i < batch.pieces.size(); ++i) {
      deliver(batch.destinations[i], batch.pieces[i].length, bytes);
      bytes += batch.pieces[i].length;
    }
  }
  batches_.clear();
  return first_failure;
}

Status FlushRemoteOwners(MPI_Comm comm, const std::vector<int>& owners, int self, bool drop) {
  const BlockOp op = drop ? BlockOp::kFlushAndDrop : BlockOp::kFlush;
  struct Exchange {
    int owner;
    std::vector<char> request;
    std::vector<char> reply;
    MPI_Request requests[2];
  };
  std::vector<Exchange> exchanges;
  exchanges.reserve(owners.size());
  for (int owner : owners) {
    if (owner == self) continue;
    Exchange& exchange = exchanges.emplace_back();
    exchange.owner = owner;
    exchange.reply.resize(sizeof(ReplyHeader) + kMaxReplyMessage);
    const int tag = NextReplyTag();
    PMPI_Irecv(exchange.reply.data(), Bytes(exchange.reply.size()), MPI_BYTE, owner, tag, comm,
               &exchange.requests[1]);
    exchange.request = EncodeRequest(op, tag, true, {}, {});
    PMPI_Isend(exchange.request.data(), Bytes(exchange.request.size()), MPI_BYTE, owner,
               kBlockRequestTag, comm, &exchange.requests[0]);
  }
  Status first_failure;
  for (Exchange& exchange : exchanges) {
    MPI_Status statuses[2];
    WaitWithoutSpinning(2, exchange.requests, statuses);
    int received = 0;
    PMPI_Get_count(&statuses[1], MPI_BYTE, &received);
    Status status = DecodeReply(exchange.reply, received, exchange.owner);
    if (!status.ok() && first_failure.ok()) first_failure = status;
  }
  return first_failure;
}

void PrefetchHints::Send(MPI_Comm comm, int owner, const std::vector<uint64_t>& blocks) {
  ReapCompleted();
  std::vector<WirePiece> pieces;
  pieces.reserve(blocks.size());
  for (uint64_t index : blocks) pieces.push_back(WirePiece{index, 0, 0});
  Pending& pending = pending_.emplace_back();
  pending.message = EncodeRequest(BlockOp::kPrefetch, 0, true, pieces, {});
  PMPI_Issend(pending.message.data(), Bytes(pending.message.size()), MPI_BYTE, owner,
              kBlockRequestTag, comm, &pending.request);
}

void PrefetchHints::ReapCompleted() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    PMPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
    it = done ? pending_.erase(it) : std::next(it);
  }
}

void PrefetchHints::WaitAll() {
  for (Pending& pending : pending_) WaitWithoutSpinning(1, &pending.request);
  pending_.clear();
}

}  // namespace stagio
