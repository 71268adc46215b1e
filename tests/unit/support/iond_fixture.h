// Test support for the daemon: a temporary directory with a root to serve, an in-process
// IondServer on a UNIX socket in it (its log lines kept for assertions), a protocol client
// over net::ClientConnection, and a raw socket for sending arbitrary bytes.
#pragma once

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "iond/config.h"
#include "iond/server.h"
#include "net/client_connection.h"
#include "net/socket.h"
#include "test_helpers.h"

namespace stagio {
namespace iond_test {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/stagio_iond_test.XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class Client;

// A server on unix:<dir>/iond.sock serving <dir>/root, with small blocks so tests stay small.
class ServerFixture {
 public:
  explicit ServerFixture(const std::function<void(iond::IondConfig*)>& adjust = nullptr) {
    root_ = dir_.path() + "/root";
    ::mkdir(root_.c_str(), 0755);
    config_.root = root_;
    net::Address address;
    address.kind = net::Address::Kind::kUnix;
    address.path = dir_.path() + "/iond.sock";
    config_.listen = {address};
    config_.block_size = 4096;
    config_.cache_size = 1 << 20;
    if (adjust) adjust(&config_);
  }
  ~ServerFixture() { Stop(); }

  Status Start() {
    server_ = std::make_unique<iond::IondServer>(config_, [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mutex_);
      log_.push_back(line);
    });
    return server_->Start();
  }
  Status Stop() { return server_ ? server_->Stop() : Status::OK(); }

  iond::IondServer& server() { return *server_; }
  const net::Address& address() const { return server_->bound_addresses().front(); }
  const std::string& root() const { return root_; }
  const std::string& dir() const { return dir_.path(); }
  iond::IondConfig& config() { return config_; }
  // A file under the root with `content`; returns its path.
  std::string MakeFile(const std::string& name, const std::string& content = "") const {
    const std::string path = root_ + "/" + name;
    WriteFile(path, content);
    return path;
  }
  // Connects a client without a token and opens `path` on it.
  Status ConnectAndOpen(const std::string& path, net::FileAccess access, Client* client,
                        uint64_t* handle);
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(log_mutex_);
    return log_;
  }
  // How many log lines contain `text`.
  size_t LogLinesWith(const std::string& text) {
    size_t count = 0;
    for (const std::string& line : log()) count += line.find(text) != std::string::npos;
    return count;
  }

 private:
  TempDir dir_;
  std::string root_;
  iond::IondConfig config_;
  std::unique_ptr<iond::IondServer> server_;
  std::mutex log_mutex_;
  std::vector<std::string> log_;
};

// Long enough for any test's request on a loaded machine; a hung daemon still fails the test
// instead of hanging it.
constexpr net::Timeout kClientTimeout{60000};

// The protocol, one call per request, over one connection.
class Client {
 public:
  static Status Connect(const net::Address& address, const std::string& token, Client* client) {
    return net::ClientConnection::Open(address, token, kClientTimeout, &client->connection_);
  }
  Status Open(const std::string& path, net::FileAccess access, uint64_t* handle) {
    net::OpenRequest request;
    request.path = path;
    request.access = static_cast<uint8_t>(access);
    net::OpenReply reply;
    Status status = connection_->Call<net::MessageType::kOpen>(request, &reply);
    *handle = reply.handle;
    return status;
  }
  Status Write(uint64_t handle, uint64_t offset, const std::string& data) {
    net::WriteRequest request;
    request.handle = handle;
    request.offset = offset;
    request.data = data;
    net::StatusReply reply;
    return connection_->Call<net::MessageType::kWriteBlocks>(request, &reply);
  }
  // A read by an aggregator of a client that spreads blocks of `block_size` over `aggregators`.
  Status Read(uint64_t handle, uint64_t offset, uint32_t length, std::string* data,
              uint64_t block_size = 0, uint32_t aggregators = 1, uint32_t pieces_after = 0) {
    net::ReadRequest request;
    request.handle = handle;
    request.offset = offset;
    request.length = length;
    request.client_block_size = block_size;
    request.client_aggregators = aggregators;
    request.pieces_after = pieces_after;
    net::ReadReply reply;
    Status status = connection_->Call<net::MessageType::kReadBlocks>(request, &reply);
    *data = reply.data;
    return status;
  }
  Status Stat(uint64_t handle, uint64_t* size) {
    net::StatReply reply;
    Status status = connection_->Call<net::MessageType::kStat>(FileRequest(handle), &reply);
    *size = reply.size;
    return status;
  }
  Status Flush(uint64_t handle) { return Simple<net::MessageType::kFlush>(handle); }
  Status Sync(uint64_t handle) { return Simple<net::MessageType::kSync>(handle); }
  Status Invalidate(uint64_t handle) { return Simple<net::MessageType::kInvalidate>(handle); }
  Status Close(uint64_t handle) { return Simple<net::MessageType::kClose>(handle); }

  net::ClientConnection& connection() { return *connection_; }

 private:
  static net::FileRequest FileRequest(uint64_t handle) {
    net::FileRequest request;
    request.handle = handle;
    return request;
  }
  template <net::MessageType kType>
  Status Simple(uint64_t handle) {
    net::StatusReply reply;
    return connection_->Call<kType>(FileRequest(handle), &reply);
  }

  std::shared_ptr<net::ClientConnection> connection_;
};

inline Status ServerFixture::ConnectAndOpen(const std::string& path, net::FileAccess access,
                                            Client* client, uint64_t* handle) {
  Status status = Client::Connect(address(), "", client);
  return status.ok() ? client->Open(path, access, handle) : status;
}

// Opens `path` read-only on `client` and reads up to `length` bytes of it: proof the client is
// served.
inline Status OpenAndRead(Client& client, const std::string& path, uint32_t length,
                          std::string* data) {
  uint64_t handle = 0;
  Status status = client.Open(path, net::FileAccess::kReadOnly, &handle);
  return status.ok() ? client.Read(handle, 0, length, data) : status;
}

// A plain socket to the daemon, for bytes that are not the protocol.
class RawSocket {
 public:
  Status Connect(const net::Address& address) {
    Status status = net::Connect(address, &fd_);
    if (!status.ok()) return status;
    // Only so a broken daemon fails the test instead of hanging it; nothing waits this long.
    timeval limit{30, 0};
    ::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    return Status::OK();
  }
  // Sends; a daemon that already closed the connection makes this fail, which is fine.
  Status Send(const std::string& bytes) {
    return net::SendAll(fd_.get(), bytes.data(), bytes.size());
  }
  void CloseWriting() { ::shutdown(fd_.get(), SHUT_WR); }
  // Everything the daemon sends until it closes the connection; false if it did not close
  // (the receive timed out).
  bool ReceiveUntilClosed(std::string* received) {
    char buffer[65536];
    while (true) {
      const ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
      if (got == 0) return true;
      if (got < 0) return errno == ECONNRESET;
      received->append(buffer, static_cast<size_t>(got));
    }
  }
  // Receives until `count` whole frames have come; false if the daemon closed first.
  bool ReceiveFrames(size_t count, std::vector<net::Frame>* frames) {
    net::FrameDecoder decoder;
    char buffer[4096];
    while (frames->size() < count) {
      net::Frame frame;
      std::string error;
      if (decoder.Next(&frame, &error) == net::FrameDecoder::Result::kFrame) {
        frames->push_back(std::move(frame));
        continue;
      }
      const ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), 0);
      if (got <= 0) return false;
      decoder.Feed(buffer, static_cast<size_t>(got));
    }
    return true;
  }
  void Close() { fd_.Reset(); }

 private:
  net::UniqueFd fd_;
};

// An encoded Hello frame.
inline std::string HelloFrame(const std::string& token, uint64_t id = 1) {
  net::HelloRequest hello;
  hello.token = token;
  hello.client = "test client";
  return net::EncodeFrame(net::MessageType::kHello, false, id, net::EncodePayload(hello));
}

}  // namespace iond_test
}  // namespace stagio
