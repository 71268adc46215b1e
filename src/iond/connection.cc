#include "iond/connection.h"

#include <sys/socket.h>

#include <system_error>
#include <vector>

#include "iond/requests.h"
#include "iond/token.h"

namespace stagio {
namespace iond {
namespace {

constexpr size_t kReceiveBuffer = 256 * 1024;
constexpr size_t kMaxClientName = 100;

// The client's name goes into log lines: printable ASCII only, and not too long.
std::string PrintableName(const std::string& name) {
  std::string printable;
  for (char c : name.substr(0, kMaxClientName)) printable += (c >= 32 && c < 127) ? c : '?';
  return printable;
}

}  // namespace

Connection::Connection(net::UniqueFd socket, std::string peer, const ConnectionEnv* env)
    : socket_(std::move(socket)),
      peer_(std::move(peer)),
      env_(env),
      name_("client at " + peer_) {}

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
  net::FrameDecoder decoder(net::kDefaultMaxPayload);
  std::vector<char> buffer(kReceiveBuffer);
  std::string reason;  // why the daemon closes the connection; empty if the client did
  bool protocol_error = false;  // the client broke the protocol (counted as dropped)
  while (reason.empty()) {
    size_t received = 0;
    Status status = net::ReceiveSome(socket_.get(), buffer.data(), buffer.size(), &received);
    if (!status.ok() || received == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (send_failed_) {
        reason = "sending a reply failed: " + send_error_;
      } else if (!status.ok()) {
        reason = status.message();
      } else if (decoder.buffered() > 0) {
        reason = "the stream ended inside a frame (" + std::to_string(decoder.buffered()) +
                 " bytes of it received)";
        protocol_error = true;
      }
      break;
    }
    decoder.Feed(buffer.data(), received);
    net::Frame frame;
    std::string error;
    net::FrameDecoder::Result result = net::FrameDecoder::Result::kNeedMore;
    while (reason.empty() &&
           (result = decoder.Next(&frame, &error)) == net::FrameDecoder::Result::kFrame) {
      protocol_error = !OnFrame(frame, &reason) && !refused_;
    }
    if (reason.empty() && result == net::FrameDecoder::Result::kMalformed) {
      reason = "malformed frame: " + error;
      protocol_error = true;
    }
  }
  if (!reason.empty()) env_->log("closing the connection of " + name_ + ": " + reason);
  if (protocol_error) env_->stats->CountDropped();
  TearDown();
  finished_ = true;
}

bool Connection::OnFrame(net::Frame& frame, std::string* reason) {
  const char* name = net::MessageName(static_cast<uint16_t>(frame.type));
  if (frame.reply) {
    *reason = "it sent a reply frame (" + std::string(name) + "); clients send requests only";
    return false;
  }
  if (!hello_done_) {
    if (frame.type != net::MessageType::kHello) {
      *reason = "its first message is " + std::string(name) + ", not Hello";
      return false;
    }
    return OnHello(frame, reason);
  }
  return Submit(frame, reason);
}

bool Connection::OnHello(const net::Frame& frame, std::string* reason) {
  net::HelloRequest hello;
  Status status = net::DecodePayload(frame.payload, &hello, "Hello");
  if (!status.ok()) {
    *reason = "malformed payload: " + status.message();
    return false;
  }
  env_->stats->CountRequest(net::MessageType::kHello);
  const std::string client = PrintableName(hello.client);
  if (!client.empty()) name_ = "client '" + client + "' at " + peer_;
  if (hello.version != net::kProtocolVersion) {
    status = Status::InvalidArgument("protocol version " + std::to_string(hello.version) +
                                     ", the daemon speaks " +
                                     std::to_string(net::kProtocolVersion));
  } else if (!env_->token.empty() && !TokensEqual(env_->token, hello.token)) {
    status = Status::InvalidArgument(hello.token.empty() ? "wrong token (none given)"
                                                         : "wrong token");
  }
  net::HelloReply reply;
  reply.status = net::ToWire(status);
  reply.server = "stagio-iond " STAGIO_VERSION_STRING;
  reply.block_size = env_->files->block_size();
  QueueReply(net::MessageType::kHello, frame.request_id, net::EncodePayload(reply));
  if (!status.ok()) {
    env_->stats->CountRefused();
    refused_ = true;
    *reason = "refused: " + status.message();
    return false;
  }
  hello_done_ = true;
  return true;
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
