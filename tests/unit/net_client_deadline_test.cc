// The client's deadline: a daemon that hangs (alive, its socket open, answering nothing) is
// taken for lost after the timeout, wherever the client waits for it (connect, Hello, a reply,
// a send it does not read), and a daemon that is only slow is not. The daemons here are fake
// peers on a UNIX socket that misbehave on purpose.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "net/client_connection.h"
#include "net/frame.h"
#include "net/messages.h"
#include "net/socket.h"
#include "support/test_helpers.h"

namespace stagio {
namespace net {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Timeout kTimeout{300};

// What a fake daemon does with one accepted connection; it returns when the test is over
// (`over` turns true) or the client hangs up.
using Behaviour = std::function<void(int socket, const std::atomic<bool>& over)>;

// Frames from `socket` until it closes or the test is over; calls on_frame for each.
void ReadFrames(int socket, const std::atomic<bool>& over,
                const std::function<void(const Frame&)>& on_frame) {
  FrameDecoder decoder;
  std::vector<char> buffer(1 << 16);
  while (!over.load()) {
    size_t received = 0;
    if (!ReceiveSome(socket, buffer.data(), buffer.size(), &received).ok() || received == 0) return;
    decoder.Feed(buffer.data(), received);
    Frame frame;
    std::string error;
    while (decoder.Next(&frame, &error) == FrameDecoder::Result::kFrame) on_frame(frame);
  }
}

void ReplyToHello(int socket, const Frame& hello) {
  HelloReply reply;
  reply.server = "fake stagio-iond";
  reply.block_size = 4096;
  const std::string frame = EncodeFrame(MessageType::kHello, true, hello.request_id,
                                        EncodePayload(reply));
  ASSERT_OK(SendAll(socket, frame.data(), frame.size()));
}

// A fake daemon on a UNIX socket in a fresh directory, serving one connection at a time.
class FakeDaemon {
 public:
  explicit FakeDaemon(Behaviour behaviour) {
    char pattern[] = "/tmp/stagio_deadline_test.XXXXXX";
    dir_ = ::mkdtemp(pattern);
    EXPECT_OK(Address::Parse("unix:" + dir_ + "/daemon.sock", &address_));
    Address bound;
    EXPECT_OK(Listen(address_, &listener_, &bound));
    thread_ = std::thread([this, behaviour] {
      while (!over_.load()) {
        UniqueFd socket(::accept(listener_.get(), nullptr, nullptr));
        if (!socket.valid()) return;
        behaviour(socket.get(), over_);
      }
    });
  }
  ~FakeDaemon() {
    over_ = true;
    ::shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  const Address& address() const { return address_; }

 private:
  std::string dir_;
  Address address_;
  UniqueFd listener_;
  std::atomic<bool> over_{false};
  std::thread thread_;
};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
constexpr double kTimeoutSeconds = 0.3;

TEST(NetClientDeadlineTest, ADaemonThatNeverAnswersHelloIsRefusedAfterTheTimeout) {
  FakeDaemon daemon([](int socket, const std::atomic<bool>& over) {
    ReadFrames(socket, over, [](const Frame&) {});  // reads, never answers
  });
  const auto start = Clock::now();
  std::shared_ptr<ClientConnection> connection;
  const Status status = ClientConnection::Open(daemon.address(), "", kTimeout, &connection);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("stagio_iond_timeout"), std::string::npos) << status.message();
  EXPECT_GE(SecondsSince(start), kTimeoutSeconds);
}

TEST(NetClientDeadlineTest, ADaemonThatStopsAnsweringIsLostAfterTheTimeout) {
  FakeDaemon daemon([](int socket, const std::atomic<bool>& over) {
    ReadFrames(socket, over, [socket](const Frame& frame) {
      if (frame.type == MessageType::kHello) ReplyToHello(socket, frame);  // then silence
    });
  });
  std::shared_ptr<ClientConnection> connection;
  ASSERT_OK(ClientConnection::Open(daemon.address(), "", kTimeout, &connection));
  const auto start = Clock::now();
  StatReply reply;
  const Status status = connection->Call<MessageType::kStat>(FileRequest{7}, &reply);
  EXPECT_FALSE(status.ok());
  EXPECT_GE(SecondsSince(start), kTimeoutSeconds);
  EXPECT_NE(status.message().find("it counts as lost"), std::string::npos) << status.message();
  EXPECT_TRUE(connection->broken());
  // Broken for good: the next request fails at once, naming why.
  const Status next = connection->Call<MessageType::kStat>(FileRequest{7}, &reply);
  EXPECT_NE(next.message().find("it counts as lost"), std::string::npos) << next.message();
}

// Replies come one at a time, each a little under the timeout after the one before: the last
// request waits several timeouts in all, but the daemon is never silent that long.
TEST(NetClientDeadlineTest, ASlowDaemonThatKeepsAnsweringIsNotLost) {
  constexpr int kRequests = 6;
  FakeDaemon daemon([](int socket, const std::atomic<bool>& over) {
    ReadFrames(socket, over, [socket](const Frame& frame) {
      if (frame.type == MessageType::kHello) return ReplyToHello(socket, frame);
      std::this_thread::sleep_for(kTimeout / 2);
      StatReply reply;
      reply.size = frame.request_id;
      const std::string bytes =
          EncodeFrame(MessageType::kStat, true, frame.request_id, EncodePayload(reply));
      ASSERT_OK(SendAll(socket, bytes.data(), bytes.size()));
    });
  });
  std::shared_ptr<ClientConnection> connection;
  ASSERT_OK(ClientConnection::Open(daemon.address(), "", kTimeout, &connection));
  const auto start = Clock::now();
  std::vector<std::shared_ptr<ClientConnection::Pending>> pending;
  for (int i = 0; i < kRequests; ++i) {
    pending.push_back(connection->Start(MessageType::kStat, EncodePayload(FileRequest{1})));
  }
  for (const auto& request : pending) {
    StatReply reply;
    EXPECT_OK(connection->FinishTyped<MessageType::kStat>(request, &reply));
  }
  EXPECT_FALSE(connection->broken());
  EXPECT_GE(SecondsSince(start), 2 * kTimeoutSeconds);  // the case is the one described
}

// A daemon that reads nothing: the client's sends fill the socket buffers and then make no
// progress. The send gives up after the timeout instead of blocking the writer for good.
TEST(NetClientDeadlineTest, ADaemonThatStopsReadingFailsTheSendAfterTheTimeout) {
  FakeDaemon daemon([](int socket, const std::atomic<bool>& over) {
    FrameDecoder decoder;
    char header[kFrameHeaderSize];
    size_t got = 0;
    while (got < sizeof(header) && !over.load()) {  // the Hello's header, then its payload
      size_t received = 0;
      if (!ReceiveSome(socket, header + got, sizeof(header) - got, &received).ok()) return;
      got += received;
    }
    decoder.Feed(header, got);
    std::string payload(decoder.needed(), '\0');
    size_t read = 0;
    while (read < payload.size()) {
      size_t received = 0;
      if (!ReceiveSome(socket, payload.data() + read, payload.size() - read, &received).ok()) {
        return;
      }
      read += received;
    }
    decoder.Feed(payload.data(), payload.size());
    Frame hello;
    std::string error;
    ASSERT_EQ(decoder.Next(&hello, &error), FrameDecoder::Result::kFrame) << error;
    ReplyToHello(socket, hello);
    while (!over.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  std::shared_ptr<ClientConnection> connection;
  ASSERT_OK(ClientConnection::Open(daemon.address(), "", kTimeout, &connection));
  WriteRequest write;
  write.data.assign(kMaxDataPerRequest, 'x');
  const auto start = Clock::now();
  Status status;
  for (int i = 0; i < 64 && status.ok(); ++i) {  // 1 GiB: far more than any socket buffer
    StatusReply reply;
    auto pending = connection->Start(MessageType::kWriteBlocks, EncodePayload(write));
    if (connection->broken()) status = connection->FinishTyped<MessageType::kWriteBlocks>(
                                  pending, &reply);
  }
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(connection->broken());
  EXPECT_NE(status.message().find("send"), std::string::npos) << status.message();
  EXPECT_GE(SecondsSince(start), kTimeoutSeconds);
}

// A listener that never accepts, with its backlog full: a connect would wait for good.
TEST(NetClientDeadlineTest, ConnectingToADaemonThatNeverAcceptsGivesUpAfterTheTimeout) {
  char pattern[] = "/tmp/stagio_deadline_test.XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  Address address;
  ASSERT_OK(Address::Parse("unix:" + dir + "/full.sock", &address));
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM, 0));
  sockaddr_un name{};
  name.sun_family = AF_UNIX;
  std::snprintf(name.sun_path, sizeof(name.sun_path), "%s", address.path.c_str());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&name), sizeof(name)), 0);
  ASSERT_EQ(::listen(listener.get(), 0), 0);
  std::vector<UniqueFd> queued;  // fill the backlog
  for (int i = 0; i < 4; ++i) {
    UniqueFd socket;
    if (!Connect(address, &socket, Timeout(50)).ok()) break;
    queued.push_back(std::move(socket));
  }
  const auto start = Clock::now();
  UniqueFd socket;
  const Status status = Connect(address, &socket, kTimeout);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("timed out"), std::string::npos) << status.message();
  EXPECT_GE(SecondsSince(start), kTimeoutSeconds);
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace net
}  // namespace stagio
