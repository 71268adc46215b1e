#include "net/client_connection.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/text.h"

namespace stagio {
namespace net {
namespace {

// What the reply thread asks one receive for at least; the rest of a large payload, when more.
constexpr size_t kReceiveChunk = 64 << 10;

void Complete(ClientConnection::Pending& pending, Status status, std::string payload) {
  std::lock_guard<std::mutex> lock(pending.mutex);
  pending.done = true;
  pending.status = std::move(status);
  pending.payload = std::move(payload);
  pending.done_signal.notify_all();
}

std::string ClientName() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return std::string(host) + " pid " + std::to_string(::getpid());
}

}  // namespace

Status ClientConnection::Open(const Address& address, const std::string& token,
                              Timeout timeout, std::shared_ptr<ClientConnection>* connection) {
  UniqueFd socket;
  Status status = Connect(address, &socket, timeout);
  if (!status.ok()) return status;
  if (timeout != Timeout::zero()) SetSendTimeout(socket.get(), timeout);
  std::shared_ptr<ClientConnection> opened(
      new ClientConnection(address, std::move(socket), timeout));
  HelloRequest hello;
  hello.token = token;
  hello.client = ClientName();
  status = opened->Call<MessageType::kHello>(hello, &opened->hello_);
  if (!status.ok()) {
    return Status::IOError("stagio-iond at " + address.ToString() + " refused the connection: " +
                           status.message());
  }
  *connection = std::move(opened);
  return Status::OK();
}

ClientConnection::ClientConnection(const Address& address, UniqueFd socket, Timeout timeout)
    : address_(address),
      socket_(std::move(socket)),
      timeout_(timeout),
      last_heard_(std::chrono::steady_clock::now().time_since_epoch().count()) {
  reader_ = std::thread([this] { ReadReplies(); });
}

std::chrono::steady_clock::time_point ClientConnection::LastHeard() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(last_heard_.load()));
}

ClientConnection::~ClientConnection() {
  Break("connection closed by the client");
  reader_.join();
}

std::shared_ptr<ClientConnection::Pending> ClientConnection::Start(MessageType type,
                                                                   const std::string& payload) {
  auto pending = std::make_shared<Pending>();
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (broken_.load()) {
      Complete(*pending, Status::IOError("stagio-iond at " + address_.ToString() + ": " +
                                         broken_reason_), "");
      return pending;
    }
    id = next_request_id_++;
    pending_[id] = pending;
  }
  const std::string frame = EncodeFrame(type, false, id, payload);
  Status sent;
  {
    std::lock_guard<std::mutex> lock(send_mutex_);
    sent = SendAll(socket_.get(), frame.data(), frame.size());
  }
  if (!sent.ok()) Break("sending " + std::string(MessageName(static_cast<uint16_t>(type))) +
                        " failed: " + sent.message());
  return pending;
}

Status ClientConnection::Finish(const std::shared_ptr<Pending>& pending, std::string* payload) {
  std::unique_lock<std::mutex> lock(pending->mutex);
  while (!pending->done) {
    if (timeout_ == Timeout::zero()) {
      pending->done_signal.wait(lock, [&] { return pending->done; });
      break;
    }
    // Silence is measured from the later of the request and the daemon's last word.
    const auto deadline = std::max(pending->started, LastHeard()) + timeout_;
    if (std::chrono::steady_clock::now() < deadline) {
      pending->done_signal.wait_until(lock, deadline);
      continue;
    }
    lock.unlock();  // Break completes this request too, under its mutex
    Break("no reply and no other word from the daemon for " + DescribeDuration(timeout_) +
          " (stagio_iond_timeout); it counts as lost");
    lock.lock();
  }
  if (!pending->status.ok()) return pending->status;
  *payload = std::move(pending->payload);
  return Status::OK();
}

void ClientConnection::ReadReplies() {
  FrameDecoder decoder;
  while (!broken_.load()) {
    // Straight into the decoder: a read's reply lands in the string the request gets.
    size_t room = std::max(kReceiveChunk, decoder.needed());
    char* into = decoder.Room(&room);
    size_t received = 0;
    Status status = ReceiveSome(socket_.get(), into, room, &received);
    decoder.Commit(received);
    if (!status.ok()) return Break(status.message());
    if (received == 0) return Break("the daemon closed the connection");
    last_heard_ = std::chrono::steady_clock::now().time_since_epoch().count();
    Frame frame;
    std::string error;
    FrameDecoder::Result result;
    while ((result = decoder.Next(&frame, &error)) == FrameDecoder::Result::kFrame) {
      std::shared_ptr<Pending> pending;
      {
        std::lock_guard<std::mutex> lock(pending_mutex_);
        auto it = pending_.find(frame.request_id);
        if (it != pending_.end() && frame.reply) {
          pending = it->second;
          pending_.erase(it);
        }
      }
      if (!pending) return Break("reply to no request (id " + std::to_string(frame.request_id) + ")");
      Complete(*pending, Status::OK(), std::move(frame.payload));
    }
    if (result == FrameDecoder::Result::kMalformed) return Break("malformed reply: " + error);
  }
}

void ClientConnection::Break(const std::string& reason) {
  std::unordered_map<uint64_t, std::shared_ptr<Pending>> failed;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (!broken_.exchange(true)) broken_reason_ = reason;
    failed.swap(pending_);
  }
  ShutDown(socket_.get());
  const Status status = BrokenStatus();
  for (auto& [id, pending] : failed) Complete(*pending, status, "");
}

Status ClientConnection::BrokenStatus() {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  return Status::IOError("stagio-iond at " + address_.ToString() + ": " + broken_reason_);
}

}  // namespace net
}  // namespace stagio
