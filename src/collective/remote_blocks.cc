#include "collective/remote_blocks.h"

#include <algorithm>
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

OwnerExchange::~OwnerExchange() { WaitWithoutSpinning(2, requests_); }

void OwnerExchange::Start(MPI_Comm comm, int owner, BlockOp op, bool whole_blocks,
                          const std::vector<WirePiece>& pieces, const std::vector<char>& payload,
                          uint64_t reply_data_bytes) {
  owner_ = owner;
  // Room for the data, or for an error text if that is longer.
  reply_.resize(sizeof(ReplyHeader) + std::max<uint64_t>(reply_data_bytes, kMaxReplyMessage));
  const int tag = NextReplyTag();
  PMPI_Irecv(reply_.data(), Bytes(reply_.size()), MPI_BYTE, owner, tag, comm, &requests_[1]);
  request_ = EncodeRequest(op, tag, whole_blocks, pieces, payload);
  PMPI_Isend(request_.data(), Bytes(request_.size()), MPI_BYTE, owner, kBlockRequestTag, comm,
             &requests_[0]);
}

Status OwnerExchange::Finish() {
  MPI_Status statuses[2];
  WaitWithoutSpinning(2, requests_, statuses);
  int received = 0;
  PMPI_Get_count(&statuses[1], MPI_BYTE, &received);
  return DecodeReply(reply_, received, owner_);
}

const char* OwnerExchange::reply_data() const { return reply_.data() + sizeof(ReplyHeader); }

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
    batch.exchange.Start(comm_, owner, op, scope == FetchScope::kWholeBlock, batch.pieces,
                         batch.payload, read_bytes);
    stats_->Add(Counter::remote_requests, 1);
    stats_->Add(Counter::exchanged_bytes, batch.payload.size());
  }
}

Status RemotePieces::Finish(Deliver deliver) {
  Status first_failure;
  for (auto& [owner, batch] : batches_) {
    Status status = batch.exchange.Finish();
    if (!status.ok()) {
      if (first_failure.ok()) first_failure = status;
      continue;
    }
    const char* bytes = batch.exchange.reply_data();
    for (size_t i = 0; i < batch.destinations.size(); ++i) {
      deliver(batch.destinations[i], batch.pieces[i].length, bytes);
      bytes += batch.pieces[i].length;
    }
  }
  batches_.clear();
  return first_failure;
}

Status FlushRemoteOwners(MPI_Comm comm, const std::vector<int>& owners, int self, bool drop) {
  const BlockOp op = drop ? BlockOp::kFlushAndDrop : BlockOp::kFlush;
  std::list<OwnerExchange> exchanges;  // a list: exchanges in flight must not move
  for (int owner : owners) {
    if (owner != self) exchanges.emplace_back().Start(comm, owner, op, true, {}, {}, 0);
  }
  Status first_failure;
  for (OwnerExchange& exchange : exchanges) {
    Status status = exchange.Finish();
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
