#include "storage/iond_file.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace stagio {
namespace {

using Pending = std::shared_ptr<net::ClientConnection::Pending>;

// A long read goes to the daemons as requests of at most this many bytes, all sent at once: a
// daemon serves them on several threads, so the transfer of one reply overlaps the storage
// reads of the next, where one request of the whole read would wait for all of storage before
// the first byte comes back. The size of ROMIO's sieving buffer, which storage serves well.
constexpr uint64_t kReadPiece = 4ull << 20;

}  // namespace

IondFile::IondFile(std::unique_ptr<DriverFile> direct,
                   std::vector<std::shared_ptr<net::ClientConnection>> connections,
                   std::vector<uint64_t> handles, bool speak)
    : direct_(std::move(direct)),
      connections_(std::move(connections)),
      handles_(std::move(handles)),
      speak_(speak) {}

IondFile::~IondFile() {
  if (direct_only_.load()) return;
  // The engine flushed before closing; Close only releases the daemons' handles, and a failure
  // here has nobody left to report to.
  ToEveryDaemon(net::MessageType::kClose);
}

BlockHomes IondFile::homes() const {
  return BlockHomes{block_size_.load(), aggregators_.load(), connections_.size()};
}

void IondFile::SetBlockLayout(uint64_t block_size, uint64_t aggregators) {
  if (block_size > 0) block_size_.store(block_size);
  aggregators_.store(std::max<uint64_t>(aggregators, 1));
}

Status IondFile::ToEveryDaemon(net::MessageType type, bool skip_lost) {
  std::vector<Pending> pending(connections_.size());
  for (size_t i = 0; i < connections_.size(); ++i) {
    if (skip_lost && connections_[i]->broken()) continue;
    pending[i] = connections_[i]->Start(type, net::EncodePayload(net::FileRequest{handles_[i]}));
  }
  Status first_error;
  for (size_t i = 0; i < connections_.size(); ++i) {
    if (!pending[i]) continue;
    net::StatusReply reply;
    Status status = connections_[i]->FinishAs(pending[i], type, &reply);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  return first_error;
}

bool IondFile::AnyDaemonLost() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const auto& connection) { return connection->broken(); });
}

template <typename Operation>
bool IondFile::UseDaemons(Operation&& operation, Status* status) {
  {
    std::shared_lock<std::shared_mutex> daemon_path(daemon_path_mutex_);
    if (direct_only_.load()) return false;
    *status = operation();
    if (status->ok() || !AnyDaemonLost()) return true;
  }
  FallBack(*status);
  return false;
}

void IondFile::FallBack(const Status& failure) {
  // Exclusive: no read or write through the daemons is under way while the path switches, so
  // none can be acknowledged by a daemon after the flush below.
  std::unique_lock<std::shared_mutex> daemon_path(daemon_path_mutex_);
  if (direct_only_.load()) return;
  // The daemons still alive write back and release what they hold of the file, or their
  // write-back could later overwrite the newer bytes written directly.
  Status survivors = ToEveryDaemon(net::MessageType::kFlush, /*skip_lost=*/true);
  Status released = ToEveryDaemon(net::MessageType::kClose, /*skip_lost=*/true);
  if (survivors.ok()) survivors = released;
  {
    std::lock_guard<std::mutex> lock(lost_writes_mutex_);
    if (writes_sent_.load() > writes_flushed_.load() || !survivors.ok()) {
      lost_writes_ = "writes to " + path() + " that the I/O-node daemons had accepted since "
                     "the last flush may be lost (" + failure.message() +
                     (survivors.ok() ? "" : "; " + survivors.message()) + ")";
    }
  }
  WarnOnce(speak_, failure.message() + "; files that were open through it are read and "
                   "written directly from now on");
  direct_only_.store(true);
}

Status IondFile::TakeLostWrites() {
  std::lock_guard<std::mutex> lock(lost_writes_mutex_);
  if (lost_writes_.empty()) return Status::OK();
  Status lost = Status::IOError(lost_writes_);
  lost_writes_.clear();
  return lost;
}

Status IondFile::ReadThroughDaemons(uint64_t offset, char* buffer, size_t length,
                                    size_t* bytes_read) {
  struct Piece {
    size_t daemon;
    uint64_t offset;
    uint64_t length;
    Pending pending;
  };
  const BlockHomes layout = homes();
  std::vector<Piece> pieces;
  std::vector<uint32_t> pieces_per_daemon(connections_.size(), 0);
  layout.ForEachPiece(offset, length, kReadPiece,
                      [&](size_t daemon, uint64_t piece_offset, uint64_t piece_length) {
                        pieces.push_back({daemon, piece_offset, piece_length, {}});
                        ++pieces_per_daemon[daemon];
                      });
  for (Piece& piece : pieces) {
    net::ReadRequest request{handles_[piece.daemon], piece.offset,
                             static_cast<uint32_t>(piece.length), layout.block_size,
                             static_cast<uint32_t>(layout.aggregators),
                             /*pieces_after=*/--pieces_per_daemon[piece.daemon]};
    piece.pending = connections_[piece.daemon]->Start(net::MessageType::kReadBlocks,
                                                      net::EncodePayload(request));
  }
  // Every reply must be taken, even after a failure. A short piece is the end of the file as
  // that daemon knows it, not the file's end: another daemon may hold bytes further on (a hole
  // below them reads as zeros), so the read ends where the last byte any daemon returned ends.
  Status first_error;
  size_t end = 0;
  for (Piece& piece : pieces) {
    net::ReadReply reply;
    Status status =
        connections_[piece.daemon]->FinishTyped<net::MessageType::kReadBlocks>(piece.pending, &reply);
    if (!status.ok()) {
      if (first_error.ok()) first_error = status;
      continue;
    }
    const size_t got = std::min<size_t>(reply.data.size(), piece.length);
    char* destination = buffer + (piece.offset - offset);
    std::memcpy(destination, reply.data.data(), got);
    std::memset(destination + got, 0, piece.length - got);
    if (got > 0) end = std::max<size_t>(end, piece.offset - offset + got);
  }
  *bytes_read = first_error.ok() ? end : 0;
  return first_error;
}

Status IondFile::WriteThroughDaemons(uint64_t offset, const char* buffer, size_t length) {
  std::vector<std::pair<size_t, Pending>> pending;
  homes().ForEachPiece(offset, length, net::kMaxDataPerRequest,
                       [&](size_t daemon, uint64_t piece_offset, uint64_t piece_length) {
                         net::WriteRequest request{
                             handles_[daemon], piece_offset,
                             std::string(buffer + (piece_offset - offset), piece_length)};
                         // Counted before it is sent: a daemon may accept it and die before
                         // its reply arrives, and FallBack must know.
                         writes_sent_.fetch_add(1);
                         pending.emplace_back(daemon, connections_[daemon]->Start(
                                                          net::MessageType::kWriteBlocks,
                                                          net::EncodePayload(request)));
                       });
  Status first_error;
  for (auto& [daemon, request] : pending) {
    net::StatusReply reply;
    Status status =
        connections_[daemon]->FinishTyped<net::MessageType::kWriteBlocks>(request, &reply);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  return first_error;
}

Status IondFile::ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) {
  Status status;
  if (UseDaemons([&] { return ReadThroughDaemons(offset, static_cast<char*>(buffer), length,
                                                 bytes_read); },
                 &status)) {
    return status;
  }
  return direct_->ReadAt(offset, buffer, length, bytes_read);
}

Status IondFile::WriteAt(uint64_t offset, const void* buffer, size_t length) {
  Status status;
  if (UseDaemons([&] { return WriteThroughDaemons(offset, static_cast<const char*>(buffer),
                                                  length); },
                 &status)) {
    return status;
  }
  // The whole request again, directly: pieces a lost daemon accepted are lost with it.
  return direct_->WriteAt(offset, buffer, length);
}

Status IondFile::GetSize(uint64_t* size) {
  // Storage may be behind a daemon's dirty bytes, and a daemon behind storage (a direct
  // writer): the file is as long as the longest view of it.
  Status status = direct_->GetSize(size);
  if (!status.ok()) return status;
  UseDaemons([&] { return StatEveryDaemon(size); }, &status);
  return status;
}

Status IondFile::StatEveryDaemon(uint64_t* size) {
  std::vector<Pending> pending;
  for (size_t i = 0; i < connections_.size(); ++i) {
    pending.push_back(connections_[i]->Start(net::MessageType::kStat,
                                             net::EncodePayload(net::FileRequest{handles_[i]})));
  }
  Status first_error;
  for (size_t i = 0; i < connections_.size(); ++i) {
    net::StatReply reply;
    Status stat = connections_[i]->FinishTyped<net::MessageType::kStat>(pending[i], &reply);
    if (stat.ok()) {
      *size = std::max(*size, reply.size);
    } else if (first_error.ok()) {
      first_error = stat;
    }
  }
  return first_error;
}

Status IondFile::Truncate(uint64_t size) {
  Status status = Flush();
  if (!status.ok()) return status;
  status = direct_->Truncate(size);
  Status invalidated = Invalidate();
  return status.ok() ? invalidated : status;
}

Status IondFile::FlushDaemons(net::MessageType type) {
  // Only writes sent before the flush was asked for are surely covered by it.
  const uint64_t covered = writes_sent_.load();
  Status status = ToEveryDaemon(type);
  if (!status.ok()) return status;
  uint64_t flushed = writes_flushed_.load();
  while (flushed < covered && !writes_flushed_.compare_exchange_weak(flushed, covered)) {
  }
  return status;
}

Status IondFile::Flush() {
  Status status;
  if (UseDaemons([&] { return FlushDaemons(net::MessageType::kFlush); }, &status)) return status;
  return TakeLostWrites();
}

Status IondFile::Sync() {
  Status status;
  if (UseDaemons([&] { return FlushDaemons(net::MessageType::kSync); }, &status)) return status;
  Status lost = TakeLostWrites();
  Status synced = direct_->Sync();
  return lost.ok() ? synced : lost;
}

Status IondFile::Invalidate() {
  Status status;
  if (UseDaemons([&] { return ToEveryDaemon(net::MessageType::kInvalidate); }, &status)) {
    return status;
  }
  return Status::OK();  // direct: nothing cached below this client
}

}  // namespace stagio
