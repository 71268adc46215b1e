#include "collective/block_server.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "collective/block_protocol.h"

namespace stagio {

namespace {

// `reply` has room for the header in front of the data (a read's bytes); a failure replaces the
// data with the error text.
void SendReply(MPI_Comm comm, int destination, int tag, const Status& status,
               std::vector<char>* reply) {
  ReplyHeader header;
  if (!status.ok()) {
    const std::string message = status.message().substr(0, kMaxReplyMessage);
    header.ok = 0;
    header.message_length = static_cast<uint32_t>(message.size());
    reply->assign(sizeof header, 0);
    reply->insert(reply->end(), message.begin(), message.end());
  }
  std::memcpy(reply->data(), &header, sizeof header);
  PMPI_Send(reply->data(), static_cast<int>(reply->size()), MPI_BYTE, destination, tag, comm);
}

}  // namespace

BlockServer::BlockServer(BlockCache* cache, IoThread* io_thread)
    : cache_(cache), io_thread_(io_thread), thread_([this] { Run(); }) {}

BlockServer::~BlockServer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  has_files_.notify_all();
  thread_.join();
}

void BlockServer::Serve(MPI_Comm comm, uint64_t file_id, std::shared_ptr<FileBackend> backend) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    files_.push_back(ServedFile{comm, file_id, std::move(backend)});
  }
  has_files_.notify_all();
}

void BlockServer::Forget(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  files_.erase(std::remove_if(files_.begin(), files_.end(),
                              [comm](const ServedFile& file) { return file.comm == comm; }),
               files_.end());
}

void BlockServer::Run() {
  auto idle_sleep = std::chrono::microseconds(1);
  while (!stopping_) {
    {
      // With no file to serve (files in the node cache, or none open) the thread sleeps
      // until there is one, instead of waking every kMaxIdleSleep for nothing.
      std::unique_lock<std::mutex> lock(mutex_);
      has_files_.wait(lock, [this] { return stopping_ || !files_.empty(); });
    }
    if (PollOnce()) {
      idle_sleep = std::chrono::microseconds(1);
      continue;
    }
    std::this_thread::sleep_for(idle_sleep);
    idle_sleep = std::min(idle_sleep * 2, kMaxIdleSleep);
  }
}

bool BlockServer::PollOnce() {
  std::lock_guard<std::mutex> lock(mutex_);
  bool any = false;
  for (const ServedFile& file : files_) {
    int found = 0;
    MPI_Message message;
    MPI_Status status;
    PMPI_Improbe(MPI_ANY_SOURCE, kBlockRequestTag, file.comm, &found, &message, &status);
    if (!found) continue;
    int bytes = 0;
    PMPI_Get_count(&status, MPI_BYTE, &bytes);
    std::vector<char> request(static_cast<size_t>(bytes));
    PMPI_Mrecv(request.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    Handle(file, request, status.MPI_SOURCE);
    any = true;
  }
  return any;
}

void BlockServer::Handle(const ServedFile& file, const std::vector<char>& request, int source) {
  RequestHeader header;
  if (request.size() < sizeof header) {
    LogError("block server: a request of " + std::to_string(request.size()) +
             " bytes from rank " + std::to_string(source) + " is too short; ignored");
    return;
  }
  std::memcpy(&header, request.data(), sizeof header);
  const size_t pieces_bytes = sizeof(WirePiece) * header.piece_count;
  if (request.size() < sizeof header + pieces_bytes) {
    LogError("block server: a request from rank " + std::to_string(source) +
             " lists more pieces than it holds; ignored");
    return;
  }
  std::vector<WirePiece> pieces(header.piece_count);
  if (!pieces.empty()) std::memcpy(pieces.data(), request.data() + sizeof header, pieces_bytes);
  const uint64_t block_size = file.backend->block_size();
  for (const WirePiece& piece : pieces) {
    if (piece.offset_in_block > block_size || piece.length > block_size - piece.offset_in_block) {
      LogError("block server: a request from rank " + std::to_string(source) +
               " has a piece past the end of its block; ignored");
      if (static_cast<BlockOp>(header.op) == BlockOp::kPrefetch) return;
      std::vector<char> reply(sizeof(ReplyHeader));
      SendReply(file.comm, source, header.reply_tag,
                Status::InvalidArgument("a block piece past the end of its block"), &reply);
      return;
    }
  }
  const char* payload = request.data() + sizeof header + pieces_bytes;
  FileStats* stats = file.backend->stats();
  const BlockOp op = static_cast<BlockOp>(header.op);

  if (op == BlockOp::kPrefetch) {
    const uint64_t epoch = cache_->InvalidationEpoch(file.file_id);
    for (const WirePiece& piece : pieces) {
      if (cache_->Contains(file.file_id, piece.index)) {
        stats->Add(Counter::prefetch_already_cached, 1);
      } else {
        io_thread_->Enqueue(PrefetchJob{file.file_id, piece.index, epoch});
      }
    }
    return;
  }

  Status status;
  std::vector<char> reply(sizeof(ReplyHeader));
  if (op == BlockOp::kRead) {
    uint64_t total = 0;
    for (const WirePiece& piece : pieces) total += piece.length;
    reply.resize(sizeof(ReplyHeader) + total);
    char* out = reply.data() + sizeof(ReplyHeader);
    const FetchScope scope =
        header.whole_blocks ? FetchScope::kWholeBlock : FetchScope::kRequestedBytes;
    for (const WirePiece& piece : pieces) {
      status = cache_->Read(file.file_id, piece.index, piece.offset_in_block, piece.length, out,
                            scope);
      if (!status.ok()) break;
      out += piece.length;
    }
    if (status.ok()) stats->Add(Counter::exchanged_bytes, total);
  } else if (op == BlockOp::kWrite) {
    uint64_t total = 0;
    for (const WirePiece& piece : pieces) total += piece.length;
    if (request.size() < sizeof header + pieces_bytes + total) {
      status = Status::InvalidArgument("write request shorter than its pieces");
    }
    for (size_t i = 0; status.ok() && i < pieces.size(); ++i) {
      const WirePiece& piece = pieces[i];
      status = cache_->Write(file.file_id, piece.index, piece.offset_in_block, piece.length,
                             payload);
      payload += piece.length;
    }
    io_thread_->Notify();
  } else if (op == BlockOp::kFlush || op == BlockOp::kFlushAndDrop) {
    status = cache_->FlushFile(file.file_id);
    if (op == BlockOp::kFlushAndDrop) {
      io_thread_->DropPrefetches(file.file_id);
      cache_->DropCleanBlocks(file.file_id);
    }
  } else {
    status = Status::InvalidArgument("unknown block operation " + std::to_string(header.op));
  }
  if (!status.ok()) {
    LogError("block server: request from rank " + std::to_string(source) + " failed: " +
             status.ToString());
  }
  SendReply(file.comm, source, header.reply_tag, status, &reply);
}

}  // namespace stagio
