// The relay end to end on loopback: bytes pass unchanged both ways, over many connections at
// once, and a close on either side closes the pair. No timing thresholds: what the delays are is
// delay_line_test.cc's job.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "endpoint.h"
#include "relay.h"

namespace stagio::link {
namespace {

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random());
  return bytes;
}

// Blocking helpers (the test's sockets are blocking; the relay's are not).
void SendAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t sent = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    ASSERT_GT(sent, 0);
    done += static_cast<size_t>(sent);
  }
}

std::string ReceiveUntilClosed(int fd) {
  std::string bytes;
  char buffer[65536];
  ssize_t got;
  while ((got = recv(fd, buffer, sizeof(buffer), 0)) > 0) bytes.append(buffer, got);
  return bytes;
}

std::string ReceiveExactly(int fd, size_t size) {
  std::string bytes;
  char buffer[65536];
  while (bytes.size() < size) {
    const ssize_t got = recv(fd, buffer, std::min(sizeof(buffer), size - bytes.size()), 0);
    if (got <= 0) break;
    bytes.append(buffer, got);
  }
  return bytes;
}

int Blocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// A relay (1 ms, 1000 MB/s) in front of a listening target, run by its own thread.
class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    target_listener_ = ListenOn(ParseEndpoint("127.0.0.1:0"));
    Blocking(target_listener_);
    RelayConfig config;
    config.target = ParseEndpoint(LocalAddress(target_listener_));
    config.latency_ms = 1;
    config.bandwidth_mbps = 1000;
    const int relay_listener = ListenOn(ParseEndpoint("127.0.0.1:0"));
    relay_address_ = ParseEndpoint(LocalAddress(relay_listener));
    relay_ = std::make_unique<Relay>(relay_listener, config);
    stop_ = eventfd(0, EFD_CLOEXEC);
    thread_ = std::thread([this] { relay_->Run(stop_); });
  }
  void TearDown() override {
    Stop();
    close(stop_);
    close(target_listener_);
  }
  // Stops the relay's thread (once); its stats are then safe to read.
  RelayStats Stop() {
    if (thread_.joinable()) {
      const uint64_t one = 1;
      (void)!write(stop_, &one, sizeof(one));
      thread_.join();
    }
    return relay_->Stats();
  }
  // A client connection through the relay, and the target's end of it.
  std::pair<int, int> Connect() {
    const int client = Blocking(ConnectTo(relay_address_));
    const int server = accept(target_listener_, nullptr, nullptr);
    return {client, server};
  }

  int target_listener_ = -1;
  Endpoint relay_address_;
  std::unique_ptr<Relay> relay_;
  int stop_ = -1;
  std::thread thread_;
};

TEST_F(RelayTest, BytesPassUnchangedBothWays) {
  auto [client, server] = Connect();
  const std::string up = RandomBytes(3 << 20, 1), down = RandomBytes(5 << 20, 2);
  // Both directions at once: more than the relay's pending limit each way.
  std::thread sender([&, client = client] { SendAll(client, up); });
  std::thread answerer([&, server = server] { SendAll(server, down); });
  EXPECT_EQ(ReceiveExactly(server, up.size()), up);
  EXPECT_EQ(ReceiveExactly(client, down.size()), down);
  sender.join();
  answerer.join();
  close(client);
  EXPECT_EQ(ReceiveUntilClosed(server), "");  // the client's close closed the pair
  close(server);
  const RelayStats stats = Stop();
  EXPECT_EQ(stats.bytes[0], up.size());
  EXPECT_EQ(stats.bytes[1], down.size());
  EXPECT_EQ(stats.connections, 1u);
}

TEST_F(RelayTest, ManyConnectionsAtOnceKeepTheirOwnBytes) {
  constexpr int kConnections = 12;
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < kConnections; ++i) pairs.push_back(Connect());
  std::vector<std::thread> threads;
  std::vector<int> ok(kConnections, 0);
  for (int i = 0; i < kConnections; ++i) {
    threads.emplace_back([&, i] {
      const auto [client, server] = pairs[i];
      const std::string request = RandomBytes(200000 + i, 10 + i);
      std::thread sender([&] { SendAll(client, request); });
      const std::string received = ReceiveExactly(server, request.size());
      sender.join();
      SendAll(server, received + "!");  // an answer that depends on the request
      close(server);                     // the target closes first this time
      ok[i] = ReceiveUntilClosed(client) == request + "!";
      close(client);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kConnections; ++i) EXPECT_TRUE(ok[i]) << "connection " << i;
  EXPECT_EQ(Stop().connections, static_cast<uint64_t>(kConnections));
}

TEST(Endpoint, ParsesHostAndPort) {
  EXPECT_EQ(ParseEndpoint("127.0.0.1:0").port, 0);
  EXPECT_EQ(ParseEndpoint("[::1]:7070").host, "::1");
  EXPECT_EQ(ParseEndpoint("ionode3:7070").port, 7070);
  EXPECT_THROW(ParseEndpoint("7070"), EndpointError);
  EXPECT_THROW(ParseEndpoint("host:70000"), EndpointError);
  EXPECT_THROW(ParseEndpoint("host:7x"), EndpointError);
}

}  // namespace
}  // namespace stagio::link
