// The Hello gate, in-process: connections that have not said Hello hold no threads and at most
// the Hello limit of bytes each, are closed at the Hello deadline however slowly they send, and
// make room oldest first when max_unauthenticated of them wait; a client that says Hello is
// served at once whatever else is connected; one past max_connections is told why it is
// refused; and the log lines of a flood are throttled.
#include <dirent.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "iond/throttled_log.h"
#include "support/iond_fixture.h"

namespace stagio {
namespace iond {
namespace {

using namespace iond_test;  // the fixture's words: Client, ServerFixture, HelloFrame, ...
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kToken[] = "gate token";

size_t ThreadsOfThisProcess() {
  size_t count = 0;
  DIR* tasks = ::opendir("/proc/self/task");
  while (const dirent* entry = ::readdir(tasks)) count += entry->d_name[0] != '.';
  ::closedir(tasks);
  return count;
}

std::string Bytes(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 31 + 7);
  return bytes;
}

// Sockets connected to the daemon that send nothing unless a test writes to them.
class Peers {
 public:
  Status Connect(const net::Address& address, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      net::UniqueFd socket;
      Status status = net::Connect(address, &socket);
      if (!status.ok()) return status;
      sockets_.push_back(std::move(socket));
    }
    return Status::OK();
  }
  int fd(size_t i) const { return sockets_.at(i).get(); }
  size_t size() const { return sockets_.size(); }

 private:
  std::vector<net::UniqueFd> sockets_;
};

// True once the daemon has closed `fd` (end of stream or reset; bytes it sent first are read
// past), false if it is still open after `limit`.
bool ClosedWithin(int fd, milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    pollfd watched{fd, POLLIN, 0};
    if (left.count() < 0 || ::poll(&watched, 1, static_cast<int>(left.count())) == 0) {
      return false;
    }
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno == ECONNRESET)) return true;
  }
}

// Slow peers: each sends `bytes` one byte per `interval`, from one thread, and notes when the
// daemon closed it.
class Dribbler {
 public:
  Dribbler(const net::Address& address, size_t count, std::string bytes, milliseconds interval)
      : bytes_(std::move(bytes)), interval_(interval), started_(Clock::now()) {
    for (size_t i = 0; i < count; ++i) {
      Slow slow;
      EXPECT_OK(net::Connect(address, &slow.socket));
      slow_.push_back(std::move(slow));
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~Dribbler() {
    stop_ = true;
    thread_.join();
  }
  // From the connects to the daemon's close of peer `i`; nothing while it is open.
  std::optional<Clock::duration> ClosedAfter(size_t i) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!slow_[i].closed) return std::nullopt;
    return *slow_[i].closed - started_;
  }
  size_t sent(size_t i) {
    std::lock_guard<std::mutex> lock(mutex_);
    return slow_[i].sent;
  }

 private:
  struct Slow {
    net::UniqueFd socket;
    size_t sent = 0;
    std::optional<Clock::time_point> closed;
  };
  void Run() {
    while (!stop_) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (Slow& slow : slow_) {
          if (slow.closed) continue;
          char byte;
          const int fd = slow.socket.get();
          const ssize_t got = ::recv(fd, &byte, 1, MSG_DONTWAIT);
          const bool open = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
          if (open && slow.sent < bytes_.size() &&
              ::send(fd, &bytes_[slow.sent], 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1) {
            ++slow.sent;
          } else if (!open) {
            slow.closed = Clock::now();
          }
        }
      }
      std::this_thread::sleep_for(interval_);
    }
  }

  const std::string bytes_;
  const milliseconds interval_;
  const Clock::time_point started_;
  std::mutex mutex_;
  std::vector<Slow> slow_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// ---- A flood does not keep a client out.

TEST(IondHelloGateTest, ClientIsServedAtOnceDuringAFloodOfSilentAndSlowPeers) {
  ServerFixture fixture([](IondConfig* config) {
    config->token = kToken;
    // Far fewer than the flood: peers that have not said Hello must not count against it.
    config->max_connections = 16;
  });
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("served");
  Peers silent;
  ASSERT_OK(silent.Connect(fixture.address(), 300));
  Dribbler slow(fixture.address(), 20, HelloFrame(kToken), milliseconds(100));
  ServerStats& stats = fixture.server().stats();
  const HelloGate& gate = fixture.server().hello_gate();
  // Every peer is in the gate or was evicted from it (counted as accepted a moment before).
  ASSERT_TRUE(test_support::WaitUntil([&] { return stats.evicted() + gate.pending() == 320; }));
  EXPECT_EQ(gate.pending(), 128u) << "max_unauthenticated's default";

  const std::string bytes = Bytes(3 * 4096 + 17);
  const auto connected = Clock::now();
  Client client;
  ASSERT_OK(Client::Connect(fixture.address(), kToken, &client));
  uint64_t handle = 0;
  ASSERT_OK(client.Open(path, net::FileAccess::kReadWrite, &handle));
  ASSERT_OK(client.Write(handle, 0, bytes));
  std::string data;
  ASSERT_OK(client.Read(handle, 0, static_cast<uint32_t>(bytes.size()) + 100, &data));
  const auto served = Clock::now() - connected;
  EXPECT_LT(served, seconds(1)) << std::chrono::duration_cast<milliseconds>(served).count()
                                << " ms from connect to the read's reply";
  EXPECT_EQ(data, bytes);
  ASSERT_OK(client.Flush(handle));
  EXPECT_EQ(ReadFile(path), bytes);
  EXPECT_EQ(stats.over_capacity(), 0u);
  EXPECT_LT(slow.sent(0), HelloFrame(kToken).size()) << "the slow peers are still dribbling";
}

// Clients whose Hello has arrived are never evicted, however many connect at once: when every
// waiting socket has bytes to read, the gate is behind, not flooded, and a newcomer waits.
TEST(IondHelloGateTest, ClientsConnectingAtOnceAreNotEvicted) {
  ServerFixture fixture([](IondConfig* config) { config->max_unauthenticated = 1; });
  ASSERT_OK(fixture.Start());
  std::vector<RawSocket> clients(30);
  for (RawSocket& client : clients) {
    ASSERT_OK(client.Connect(fixture.address()));
    ASSERT_OK(client.Send(HelloFrame("")));
  }
  for (RawSocket& client : clients) {
    std::vector<net::Frame> replies;
    ASSERT_TRUE(client.ReceiveFrames(1, &replies));
    net::HelloReply reply;
    ASSERT_OK(net::DecodePayload(replies[0].payload, &reply, "Hello"));
    EXPECT_EQ(reply.status.code, 0) << reply.status.message;
  }
  EXPECT_EQ(fixture.server().stats().evicted(), 0u);
}

// ---- The Hello deadline.

TEST(IondHelloGateTest, SilentAndSlowPeersAreClosedAtTheHelloDeadline) {
  ServerFixture fixture([](IondConfig* config) {
    config->token = kToken;
    config->hello_timeout = 1;
  });
  ASSERT_OK(fixture.Start());
  const auto connected = Clock::now();
  Peers silent;
  ASSERT_OK(silent.Connect(fixture.address(), 30));
  // A whole Hello at this pace takes over 5 s: only the deadline closes it at 1 s.
  Dribbler slow(fixture.address(), 1, HelloFrame(kToken), milliseconds(100));
  ASSERT_TRUE(ClosedWithin(silent.fd(0), seconds(5)));
  const auto first_closed = Clock::now() - connected;
  EXPECT_GE(first_closed, milliseconds(900));
  EXPECT_LT(first_closed, seconds(3));
  for (size_t i = 1; i < silent.size(); ++i) EXPECT_TRUE(ClosedWithin(silent.fd(i), seconds(2)));
  ASSERT_TRUE(test_support::WaitUntil([&] { return slow.ClosedAfter(0).has_value(); },
                                      seconds(5)));
  EXPECT_GE(*slow.ClosedAfter(0), milliseconds(900));
  EXPECT_LT(*slow.ClosedAfter(0), seconds(3));
  EXPECT_GT(slow.sent(0), 5u) << "it did send, a byte at a time";
  EXPECT_LT(slow.sent(0), HelloFrame(kToken).size());

  EXPECT_EQ(fixture.server().stats().hello_timeouts(), 31u);
  EXPECT_EQ(fixture.server().hello_gate().pending(), 0u);
  // A flood's log: the first ten lines, then one line with the count of the rest.
  EXPECT_EQ(fixture.LogLinesWith(": no Hello within 1 s ("), 10u);
  ASSERT_OK(fixture.Stop());
  EXPECT_EQ(fixture.LogLinesWith("closed 21 more connections that did not say Hello within 1 s"),
            1u);
  EXPECT_EQ(fixture.server().StatsJson()["connections"]["hello_timeouts"], 31u);
}

// ---- Memory before Hello.

TEST(IondHelloGateTest, HelloHeaderOverTheLimitIsRefusedUnread) {
  ServerFixture fixture;  // hello_max_bytes: 4096
  ASSERT_OK(fixture.Start());
  net::HelloRequest hello;
  hello.client = std::string(5000, 'c');
  const std::string payload = net::EncodePayload(hello);
  net::UniqueFd peer;
  ASSERT_OK(net::Connect(fixture.address(), &peer));
  const std::string frame = net::EncodeFrame(net::MessageType::kHello, false, 1, payload);
  ASSERT_OK(net::SendAll(peer.get(), frame.data(), frame.size()));
  EXPECT_TRUE(ClosedWithin(peer.get(), seconds(2)));
  EXPECT_EQ(fixture.server().hello_gate().peak_buffered_bytes(), net::kFrameHeaderSize)
      << "the daemon read the header and nothing of the payload";
  EXPECT_EQ(fixture.server().stats().dropped(), 1u);
  EXPECT_EQ(fixture.LogLinesWith("Hello payload of " + std::to_string(payload.size()) +
                                 " bytes exceeds the limit of 4096"),
            1u);

  // A Hello of exactly the limit is served.
  hello.client.resize(hello.client.size() - (payload.size() - 4096));
  ASSERT_EQ(net::EncodePayload(hello).size(), 4096u);
  RawSocket client;
  ASSERT_OK(client.Connect(fixture.address()));
  ASSERT_OK(client.Send(
      net::EncodeFrame(net::MessageType::kHello, false, 1, net::EncodePayload(hello))));
  std::vector<net::Frame> replies;
  ASSERT_TRUE(client.ReceiveFrames(1, &replies));
  net::HelloReply reply;
  ASSERT_OK(net::DecodePayload(replies[0].payload, &reply, "Hello"));
  EXPECT_EQ(reply.status.code, 0) << reply.status.message;
}

TEST(IondHelloGateTest, PartialHellosBufferAtMostTheLimitPerWaitingPeer) {
  constexpr size_t kWaiting = 32;
  constexpr size_t kLimit = 4096;
  ServerFixture fixture([](IondConfig* config) { config->max_unauthenticated = kWaiting; });
  ASSERT_OK(fixture.Start());
  // The largest Hello the gate holds, all but its last byte.
  std::string partial =
      net::EncodeFrame(net::MessageType::kHello, false, 1, std::string(kLimit, 'p'));
  partial.pop_back();
  Peers peers;
  for (size_t i = 0; i < 100; ++i) {
    ASSERT_OK(peers.Connect(fixture.address(), 1));
    ASSERT_OK(net::SendAll(peers.fd(i), partial.data(), partial.size()));
  }
  const HelloGate& gate = fixture.server().hello_gate();
  ASSERT_TRUE(test_support::WaitUntil([&] {
    return fixture.server().stats().evicted() + gate.pending() == 100 &&
           gate.buffered_bytes() == gate.pending() * partial.size();
  }));
  EXPECT_EQ(gate.pending(), kWaiting);
  EXPECT_EQ(fixture.server().stats().evicted(), 100 - kWaiting);
  EXPECT_EQ(gate.buffered_bytes(), kWaiting * partial.size());
  EXPECT_LE(gate.peak_buffered_bytes(), kWaiting * (net::kFrameHeaderSize + kLimit));
}

// ---- Threads.

TEST(IondHelloGateTest, WaitingPeersHoldNoThreads) {
  ServerFixture fixture([](IondConfig* config) { config->max_unauthenticated = 256; });
  ASSERT_OK(fixture.Start());
  const size_t before = ThreadsOfThisProcess();
  Peers silent;
  ASSERT_OK(silent.Connect(fixture.address(), 200));
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return fixture.server().hello_gate().pending() == 200; }));
  EXPECT_EQ(ThreadsOfThisProcess(), before);

  // A client past Hello: the daemon's reader and writer, and the client's own reader.
  Client client;
  ASSERT_OK(Client::Connect(fixture.address(), "", &client));
  EXPECT_TRUE(test_support::WaitUntil([&] { return ThreadsOfThisProcess() == before + 3; },
                                      seconds(5)))
      << ThreadsOfThisProcess() << " threads, " << before << " before";
}

// ---- The cap on clients past Hello.

TEST(IondHelloGateTest, ClientsPastMaxConnectionsAreToldWhy) {
  ServerFixture fixture([](IondConfig* config) {
    config->token = kToken;
    config->max_connections = 3;
    config->max_unauthenticated = 8;
  });
  ASSERT_OK(fixture.Start());
  Peers silent;  // more than either cap, and neither fills max_connections
  ASSERT_OK(silent.Connect(fixture.address(), 20));
  ASSERT_TRUE(test_support::WaitUntil([&] { return fixture.server().stats().accepted() == 20; }));
  std::vector<Client> clients(3);
  for (Client& client : clients) ASSERT_OK(Client::Connect(fixture.address(), kToken, &client));

  Client extra;
  const Status status = Client::Connect(fixture.address(), kToken, &extra);
  EXPECT_NE(status.message().find("refused the connection: the daemon serves 3 connections "
                                  "already"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(fixture.server().stats().over_capacity(), 1u);
  EXPECT_EQ(fixture.server().stats().refused(), 0u) << "not a wrong token";
  EXPECT_EQ(fixture.LogLinesWith("refused: the daemon serves 3 connections already"), 1u);

  // A client that leaves gives its place to the next.
  clients[0] = Client();
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return Client::Connect(fixture.address(), kToken, &extra).ok(); }, seconds(5)));
  std::string data;
  ASSERT_OK(OpenAndRead(extra, fixture.MakeFile("after", "in at last"), 100, &data));
  EXPECT_EQ(data, "in at last");
}

// ---- Throttled log lines.

TEST(IondHelloGateTest, ThrottledLogCountsWhatItHoldsBack) {
  std::vector<std::string> lines;
  ThrottledLog log([&](const std::string& line) { lines.push_back(line); }, 3, seconds(60));
  const auto start = Clock::now();
  const EventKind timeouts{"closed", "connections that did not say Hello within 10 s"};
  for (int i = 0; i < 10; ++i) {
    log.Log(timeouts, "timeout " + std::to_string(i), start + seconds(i));
  }
  log.Log({"evicted", "connections"}, "evicted one", start);
  const std::vector<std::string> first = {"timeout 0", "timeout 1", "timeout 2", "evicted one"};
  EXPECT_EQ(lines, first);
  log.Flush(start + seconds(59));
  EXPECT_EQ(lines.size(), 4u) << "the window has not ended";
  log.Flush(start + seconds(60));
  ASSERT_EQ(lines.size(), 5u) << "a summary for the timeouts only: no eviction was held back";
  EXPECT_EQ(lines[4],
            "closed 7 more connections that did not say Hello within 10 s in the last 60 s (only "
            "the first 3 of each 60 s are logged one by one)");
  log.Log(timeouts, "a new window", start + seconds(61));
  EXPECT_EQ(lines.back(), "a new window");
}

}  // namespace
}  // namespace iond
}  // namespace stagio
