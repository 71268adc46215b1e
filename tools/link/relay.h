// The relay of stagio-link: accepts connections on a listening socket, connects each one to the
// target, and carries the bytes of both directions through a DelayLine (delay_line.h), so that
// they arrive when the emulated link would have delivered them.
//
// One thread, one epoll loop: sockets are non-blocking; a timerfd wakes the loop when the next
// chunk arrives. Each direction is one wire shared by all connections (one DelayLine per
// direction). A connection whose chunks are not yet delivered past kMaxPendingBytes stops being
// read until they are (the kernel's flow control then slows the sender), so a fast sender
// cannot make the relay buffer without bound.
//
// When either side of a pair closes (or fails), its end of stream crosses the link behind its
// last data; once that is delivered, the relay closes both sockets of the pair.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "delay_line.h"
#include "endpoint.h"

namespace stagio::link {

struct RelayConfig {
  Endpoint target;
  double latency_ms = 0;
  double bandwidth_mbps = 0;  // 0: unlimited
};

// Index 0: client to target ("up"), 1: target to client ("down").
struct RelayStats {
  uint64_t connections = 0;
  uint64_t connect_failures = 0;
  uint64_t max_open_connections = 0;
  uint64_t bytes[2] = {0, 0};
  uint64_t chunks[2] = {0, 0};
  int64_t wire_busy_ns[2] = {0, 0};
};

class Relay {
 public:
  static constexpr size_t kChunkBytes = 64 * 1024;
  static constexpr size_t kMaxPendingBytes = 4 * 1024 * 1024;

  // Takes ownership of `listen_fd`, a listening socket.
  Relay(int listen_fd, RelayConfig config);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Relays until `stop_fd` becomes readable (a signalfd, an eventfd, a pipe), then closes every
  // connection and returns.
  void Run(int stop_fd);

  RelayStats Stats() const;

 private:
  struct Pair;

  void Accept();
  void OnSocketEvent(uint64_t id, int side, uint32_t events);
  void ReadFrom(Pair* pair, int side);
  void Deliver(const Chunk& chunk, int direction);
  void Flush(Pair* pair, int direction);
  void UpdateInterest(Pair* pair, int side);
  void ClosePair(uint64_t id);
  void ArmTimer();
  void DeliverArrived();

  int listen_fd_;
  int epoll_fd_;
  int timer_fd_;
  RelayConfig config_;
  DelayLine lines_[2];
  std::unordered_map<uint64_t, std::unique_ptr<Pair>> pairs_;
  uint64_t next_id_ = 1;
  RelayStats stats_;
};

}  // namespace stagio::link
