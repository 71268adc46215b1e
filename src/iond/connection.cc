#include "iond/connection.h"

#include <sys/socket.h>

#include <memory>
#include <system_error>

#include "iond/requests.h"

namespace stagio {
namespace iond {
namespace {

constexpr size_t kReceiveBuffer = 256 * 1024;

}  // namespace

Connection::Connection(GreetedSocket greeted, const ConnectionEnv* env)
    : socket_(std::move(greeted.socket)),
      env_(env),
      name_(std::move(greeted.name)),
      decoder_(std::move(greeted.decoder)) {
  // Goes out first: the writer sends replies in the order they are queued.
  replies_.push_back(std::move(greeted.hello_reply));
}

Connection::~Connection() { Join(); }

Status Connection::Start() {
  // Thread creation fails when the process is at its thread limit: that costs this connection
  // only, not the accept thread.
  try {
    writer_ = std::thread([this] { WriteReplies(); });
  } catch (const std::system_error& error) {
    return Status::IOError(std::string("no thread for its replies: ") + error.what());
  }
  try {
    reader_ = std::thread([this] { Run(); });
  } catch (const std::system_error& error) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_writer_ = true;
    }
    replies_ready_.notify_one();
    writer_.join();
    return Status::IOError(std::string("no thread to read its requests: ") + error.what());
  }
  return Status::OK();
}

void Connection::StopReading() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!socket_closed_) ::shutdown(socket_.get(), SHUT_RD);
}

void Connection::Join() {
  if (reader_.joinable()) reader_.join();
}


void Connection::Run() {
  // Not zeroed: pages the kernel never writes to (a client of small requests) stay unmapped.
  std::unique_ptr<char[]> buffer(new char[kReceiveBuffer]);
  std::string reason;  // why the daemon closes the connection; empty if the client did
  bool protocol_error = false;  // the client broke the protocol (counted as dropped)
  // Frames the gate received after the Hello (a client may pipeline) come before any recv.
  while (TakeFrames(&reason, &protocol_error)) {
    size_t received = 0;
    Status status = net::ReceiveSome(socket_.get(), buffer.get(), kReceiveBuffer, &received);
    if (!status.ok() || received == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (send_failed_) {
        reason = "sending a reply failed: " + send_error_;
      } else if (!status.ok()) {
        reason = status.message();
      } else if (decoder_.buffered() > 0) {
        reason = "the stream ended inside a frame (" + std::to_string(decoder_.buffered()) +
                 " bytes of it received)";
        protocol_error = true;
      }
      break;
    }
    decoder_.Feed(buffer.get(), received);
  }
  if (!reason.empty()) env_->log("closing the connection of " + name_ + ": " + reason);
  if (protocol_error) env_->stats->CountDropped();
  TearDown();
  finished_ = true;
}

bool Connection::TakeFrames(std::string* reason, bool* protocol_error) {
  net::Frame frame;
  std::string error;
  net::FrameDecoder::Result result;
  while ((result = decoder_.Next(&frame, &error)) == net::FrameDecoder::Result::kFrame) {
    if (!OnFrame(frame, reason)) {
      *protocol_error = true;
      return false;
    }
  }
  if (result == net::FrameDecoder::Result::kMalformed) {
    *reason = "malformed frame: " + error;
    *protocol_error = true;
    return false;
  }
  return true;
}

bool Connection::OnFrame(net::Frame& frame, std::string* reason) {
  if (frame.reply) {
    *reason = "it sent a reply frame (" +
              std::string(net::MessageName(static_cast<uint16_t>(frame.type))) +
              "); clients send requests only";
    return false;
  }
  return Submit(frame, reason);
}

bool Connection::Submit(const net::Frame& frame, std::string* reason) {
  PreparedRequest prepared;
  uint64_t reply_memory = 0;
  Status status = PrepareRequest(frame, &prepared, &reply_memory);
  if (!status.ok()) {
    *reason = "malformed payload: " + status.message();
    return false;
  }
  const uint64_t cost = frame.payload.size() + reply_memory;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // One request always fits, whatever its size: the frame decoder already bounds it.
    in_flight_changed_.wait(lock, [&] {
      return send_failed_ || in_flight_ == 0 ||
             (in_flight_ < kMaxRequestsInFlight && in_flight_bytes_ + cost <= kMaxBytesInFlight);
    });
    if (send_failed_) {
      *reason = "sending a reply failed: " + send_error_;
      return false;
    }
    ++in_flight_;
    in_flight_bytes_ += cost;
    env_->stats->NoteInFlight(in_flight_, in_flight_bytes_);
  }
  const net::MessageType type = frame.type;
  const uint64_t id = frame.request_id;
  env_->pool->Submit([self = shared_from_this(), prepared = std::move(prepared), type, id, cost] {
    RequestContext context{self->env_->files, &self->session_, self->env_->stats,
                           &self->env_->log, &self->name_};
    self->QueueReply(type, id, prepared(context));
    std::lock_guard<std::mutex> lock(self->mutex_);
    --self->in_flight_;
    self->in_flight_bytes_ -= cost;
    self->in_flight_changed_.notify_all();
  });
  return true;
}

void Connection::QueueReply(net::MessageType type, uint64_t request_id,
                            const std::string& payload) {
  std::string frame = net::EncodeFrame(type, /*reply=*/true, request_id, payload);
  std::lock_guard<std::mutex> lock(mutex_);
  replies_.push_back(std::move(frame));
  replies_ready_.notify_one();
}

void Connection::WriteReplies() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    replies_ready_.wait(lock, [this] { return stop_writer_ || !replies_.empty(); });
    if (replies_.empty()) return;  // asked to stop, and everything is sent
    std::string frame = std::move(replies_.front());
    replies_.pop_front();
    if (send_failed_) continue;  // the client is gone: drop what is left
    lock.unlock();
    Status status = net::SendAll(socket_.get(), frame.data(), frame.size());
    lock.lock();
    if (!status.ok()) {
      send_failed_ = true;
      send_error_ = status.message();
      // Wakes the reader, whether it waits for data or for room to submit.
      ::shutdown(socket_.get(), SHUT_RDWR);
      in_flight_changed_.notify_all();
    }
  }
}

void Connection::TearDown() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    in_flight_changed_.wait(lock, [this] { return in_flight_ == 0; });
    stop_writer_ = true;
    replies_ready_.notify_one();
  }
  writer_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    socket_closed_ = true;
    socket_.Reset();
  }
  for (Handle& handle : session_.TakeAll()) {
    Status status = env_->files->Close(handle.file);
    if (status.ok()) continue;
    env_->log("the connection of " + name_ + " ended with " + handle.file->path() +
              " open, and flushing it failed: " + status.message());
    if (env_->report_unflushed) env_->report_unflushed(handle.file->path(), status);
  }
}

}  // namespace iond
}  // namespace stagio
