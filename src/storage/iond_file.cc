#include "storage/iond_file.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"

namespace stagio {
namespace {

using Pending = std::shared_ptr<net::ClientConnection::Pending>;

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

Status IondFile::ToEveryDaemon(net::MessageType type) {
  std::vector<Pending> pending;
  for (size_t i = 0; i < connections_.size(); ++i) {
    pending.push_back(connections_[i]->Start(type, net::EncodePayload(net::FileRequest{handles_[i]})));
  }
  Status first_error;
  for (size_t i = 0; i < connections_.size(); ++i) {
    std::string payload;
    Status status = connections_[i]->Finish(pending[i], &payload);
    net::StatusReply reply;
    if (status.ok()) status = net::DecodePayload(payload, &reply, net::MessageName(static_cast<uint16_t>(type)));
    if (status.ok()) status = net::FromWire(reply.status);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  return first_error;
}

bool IondFile::FellBack(const Status& failure) {
  const bool broken = std::any_of(connections_.begin(), connections_.end(),
                                  [](const auto& connection) { return connection->broken(); });
  if (!broken) return false;
  std::lock_guard<std::mutex> lock(fall_back_mutex_);
  if (!direct_only_.load()) {
    if (writes_accepted_.load() > writes_flushed_.load()) {
      lost_writes_ = "writes to " + path() + " that the I/O-node daemon had accepted since the "
                     "last sync or close may be lost (" + failure.message() + ")";
    }
    WarnOnce(speak_, failure.message() + "; files that were open through it are read and "
                     "written directly from now on");
    direct_only_.store(true);
  }
  return true;
}

Status IondFile::TakeLostWrites() {
  std::lock_guard<std::mutex> lock(fall_back_mutex_);
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
  layout.ForEachPiece(offset, length, net::kMaxDataPerRequest,
                      [&](size_t daemon, uint64_t piece_offset, uint64_t piece_length) {
                        net::ReadRequest request{handles_[daemon], piece_offset,
                                                 static_cast<uint32_t>(piece_length),
                                                 layout.block_size,
                                                 static_cast<uint32_t>(layout.aggregators)};
                        pieces.push_back({daemon, piece_offset, piece_length,
                                          connections_[daemon]->Start(
                                              net::MessageType::kReadBlocks,
                                              net::EncodePayload(request))});
                      });
  // Every reply must be taken, even after a failure or a short piece, so none is left waiting.
  Status first_error;
  size_t done = 0;
  bool reached_end = false;
  for (Piece& piece : pieces) {
    net::ReadReply reply;
    Status status =
        connections_[piece.daemon]->FinishTyped<net::MessageType::kReadBlocks>(piece.pending, &reply);
    if (!status.ok()) {
      if (first_error.ok()) first_error = status;
      continue;
    }
    if (reached_end || !first_error.ok()) continue;
    const size_t got = std::min<size_t>(reply.data.size(), piece.length);
    std::memcpy(buffer + (piece.offset - offset), reply.data.data(), got);
    done += got;
    // A short piece is the end of the file: nothing after it counts.
    if (got < piece.length) reached_end = true;
  }
  *bytes_read = done;
  return first_error;
}

Status IondFile::WriteThroughDaemons(uint64_t offset, const char* buffer, size_t length) {
  std::vector<std::pair<size_t, Pending>> pending;
  homes().ForEachPiece(offset, length, net::kMaxDataPerRequest,
                       [&](size_t daemon, uint64_t piece_offset, uint64_t piece_length) {
                         net::WriteRequest request{
                             handles_[daemon], piece_offset,
                             std::string(buffer + (piece_offset - offset), piece_length)};
                         pending.emplace_back(daemon, connections_[daemon]->Start(
                                                          net::MessageType::kWriteBlocks,
                                                          net::EncodePayload(request)));
                       });
  Status first_error;
  for (auto& [daemon, request] : pending) {
    net::StatusReply reply;
    Status status =
        connections_[daemon]->FinishTyped<net::MessageType::kWriteBlocks>(request, &reply);
    if (status.ok()) {
      writes_accepted_.fetch_add(1);
    } else if (first_error.ok()) {
      first_error = status;
    }
  }
  return first_error;
}

Status IondFile::ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) {
  if (!direct_only_.load()) {
    Status status = ReadThroughDaemons(offset, static_cast<char*>(buffer), length, bytes_read);
    if (status.ok() || !FellBack(status)) return status;
  }
  return direct_->ReadAt(offset, buffer, length, bytes_read);
}

Status IondFile::WriteAt(uint64_t offset, const void* buffer, size_t length) {
  if (!direct_only_.load()) {
    Status status = WriteThroughDaemons(offset, static_cast<const char*>(buffer), length);
    if (status.ok() || !FellBack(status)) return status;
  }
  // The whole request again, directly: pieces the lost daemon accepted are lost with it.
  return direct_->WriteAt(offset, buffer, length);
}

Status IondFile::GetSize(uint64_t* size) {
  // Storage may be behind a daemon's dirty bytes, and a daemon behind storage (a direct
  // writer): the file is as long as the longest view of it.
  Status status = direct_->GetSize(size);
  if (!status.ok() || direct_only_.load()) return status;
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
  if (first_error.ok() || FellBack(first_error)) return Status::OK();
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
  // Only writes accepted before the flush was asked for are surely covered by it.
  const uint64_t covered = writes_accepted_.load();
  Status status = ToEveryDaemon(type);
  if (!status.ok()) return status;
  uint64_t flushed = writes_flushed_.load();
  while (flushed < covered && !writes_flushed_.compare_exchange_weak(flushed, covered)) {
  }
  return status;
}

Status IondFile::Flush() {
  if (!direct_only_.load()) {
    Status status = FlushDaemons(net::MessageType::kFlush);
    if (status.ok() || !FellBack(status)) return status;
  }
  return TakeLostWrites();
}

Status IondFile::Sync() {
  if (!direct_only_.load()) {
    Status status = FlushDaemons(net::MessageType::kSync);
    if (status.ok() || !FellBack(status)) return status;
  }
  Status lost = TakeLostWrites();
  Status synced = direct_->Sync();
  return lost.ok() ? synced : lost;
}

Status IondFile::Invalidate() {
  if (direct_only_.load()) return Status::OK();
  Status status = ToEveryDaemon(net::MessageType::kInvalidate);
  if (status.ok() || FellBack(status)) return Status::OK();
  return status;
}

}  // namespace stagio
