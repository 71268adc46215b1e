// The relay's event loop: see relay.h.
#include "relay.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

namespace stagio::link {
namespace {

constexpr int kClient = 0;
constexpr int kTarget = 1;
// Direction d carries what side d sends to side 1 - d.
int Destination(int direction) { return 1 - direction; }

// epoll data: the pair id and the side; ids 0 and ~0 mark the listener and the timer/stop fds.
constexpr uint64_t kListenerTag = 0;
constexpr uint64_t kTimerTag = ~0ULL;
constexpr uint64_t kStopTag = ~0ULL - 1;
uint64_t SocketTag(uint64_t id, int side) { return id * 2 + static_cast<uint64_t>(side); }

int64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

void Watch(int epoll_fd, int fd, uint64_t tag, uint32_t events) {
  epoll_event event = {};
  event.events = events;
  event.data.u64 = tag;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

}  // namespace

struct Relay::Pair {
  uint64_t id = 0;
  int fd[2] = {-1, -1};
  uint32_t interest[2] = {0, 0};
  // Per direction: bytes read and not yet written on (in flight or in `outbound`); arrived
  // bytes waiting for the destination socket; the source closed; its end of stream arrived.
  size_t pending[2] = {0, 0};
  std::string outbound[2];
  bool source_closed[2] = {false, false};
  bool end_arrived[2] = {false, false};
};

Relay::Relay(int listen_fd, RelayConfig config)
    : listen_fd_(listen_fd),
      epoll_fd_(epoll_create1(EPOLL_CLOEXEC)),
      timer_fd_(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)),
      config_(config),
      lines_{DelayLine(config.latency_ms, config.bandwidth_mbps),
             DelayLine(config.latency_ms, config.bandwidth_mbps)} {
  Watch(epoll_fd_, listen_fd_, kListenerTag, EPOLLIN);
  Watch(epoll_fd_, timer_fd_, kTimerTag, EPOLLIN);
}

Relay::~Relay() {
  while (!pairs_.empty()) ClosePair(pairs_.begin()->first);
  close(timer_fd_);
  close(epoll_fd_);
  close(listen_fd_);
}

RelayStats Relay::Stats() const {
  RelayStats stats = stats_;
  for (int d = 0; d < 2; ++d) stats.wire_busy_ns[d] = lines_[d].BusyNs();
  return stats;
}

void Relay::Run(int stop_fd) {
  Watch(epoll_fd_, stop_fd, kStopTag, EPOLLIN);
  epoll_event events[64];
  for (;;) {
    const int count = epoll_wait(epoll_fd_, events, 64, -1);
    if (count < 0 && errno == EINTR) continue;
    for (int i = 0; i < count; ++i) {
      const uint64_t tag = events[i].data.u64;
      if (tag == kStopTag) {
        while (!pairs_.empty()) ClosePair(pairs_.begin()->first);
        return;
      }
      if (tag == kListenerTag) {
        Accept();
      } else if (tag == kTimerTag) {
        uint64_t expirations;
        (void)!read(timer_fd_, &expirations, sizeof(expirations));
      } else {
        OnSocketEvent(tag / 2, static_cast<int>(tag % 2), events[i].events);
      }
    }
    DeliverArrived();
    ArmTimer();
  }
}

void Relay::Accept() {
  for (;;) {
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;  // EAGAIN: all taken; other errors: the client is gone already
    MakeRelayReady(client);
    int target;
    try {
      target = ConnectTo(config_.target);
    } catch (const EndpointError& error) {
      std::cerr << "stagio-link: " << error.what() << "; closing the client's connection\n";
      ++stats_.connect_failures;
      close(client);
      continue;
    }
    auto pair = std::make_unique<Pair>();
    pair->id = next_id_++;
    pair->fd[kClient] = client;
    pair->fd[kTarget] = target;
    for (int side = 0; side < 2; ++side) {
      pair->interest[side] = EPOLLIN;
      Watch(epoll_fd_, pair->fd[side], SocketTag(pair->id, side), EPOLLIN);
    }
    pairs_[pair->id] = std::move(pair);
    ++stats_.connections;
    stats_.max_open_connections = std::max<uint64_t>(stats_.max_open_connections, pairs_.size());
  }
}

void Relay::OnSocketEvent(uint64_t id, int side, uint32_t events) {
  auto found = pairs_.find(id);
  if (found == pairs_.end()) return;  // closed earlier in this round
  Pair* pair = found->second.get();
  if (events & EPOLLOUT) Flush(pair, 1 - side);  // the direction this side receives
  if (pairs_.count(id) == 0) return;
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ReadFrom(pair, side);
}

void Relay::ReadFrom(Pair* pair, int side) {
  const int direction = side;  // what this side sends
  const int64_t now = NowNs();
  while (!pair->source_closed[direction] && pair->pending[direction] < kMaxPendingBytes) {
    std::string data(kChunkBytes, '\0');
    const ssize_t got = recv(pair->fd[side], data.data(), data.size(), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (got < 0) {  // reset: nothing more will cross in either direction
      ClosePair(pair->id);
      return;
    }
    if (got == 0) {  // an orderly close: the end of stream follows the last data
      pair->source_closed[direction] = true;
      lines_[direction].SendEndOfStream(now, pair->id);
      break;
    }
    data.resize(static_cast<size_t>(got));
    pair->pending[direction] += data.size();
    stats_.bytes[direction] += data.size();
    ++stats_.chunks[direction];
    lines_[direction].Send(now, pair->id, std::move(data));
  }
  UpdateInterest(pair, side);
}

void Relay::DeliverArrived() {
  const int64_t now = NowNs();
  for (int direction = 0; direction < 2; ++direction) {
    Chunk chunk;
    while (lines_[direction].PopArrived(now, &chunk)) Deliver(chunk, direction);
  }
}

void Relay::Deliver(const Chunk& chunk, int direction) {
  auto found = pairs_.find(chunk.connection);
  if (found == pairs_.end()) return;  // the pair closed while this was on its way
  Pair* pair = found->second.get();
  if (chunk.end_of_stream) {
    pair->end_arrived[direction] = true;
  } else {
    pair->outbound[direction] += chunk.data;
  }
  Flush(pair, direction);
}

void Relay::Flush(Pair* pair, int direction) {
  const int destination = Destination(direction);
  std::string& outbound = pair->outbound[direction];
  size_t written = 0;
  while (written < outbound.size()) {
    const ssize_t sent = send(pair->fd[destination], outbound.data() + written,
                              outbound.size() - written, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (sent < 0) {  // the destination is gone: so is the pair
      ClosePair(pair->id);
      return;
    }
    written += static_cast<size_t>(sent);
  }
  outbound.erase(0, written);
  pair->pending[direction] -= written;
  if (outbound.empty() && pair->end_arrived[direction]) {
    ClosePair(pair->id);
    return;
  }
  UpdateInterest(pair, destination);   // wants EPOLLOUT while outbound data waits
  UpdateInterest(pair, direction);     // the source may read again below the limit
}

void Relay::UpdateInterest(Pair* pair, int side) {
  const int reads = side;                   // the direction this side's reads feed
  const int writes = Destination(side);     // the direction this side receives
  uint32_t wanted = 0;
  if (!pair->source_closed[reads] && pair->pending[reads] < kMaxPendingBytes) wanted |= EPOLLIN;
  if (!pair->outbound[writes].empty()) wanted |= EPOLLOUT;
  if (wanted == pair->interest[side]) return;
  epoll_event event = {};
  event.events = wanted;
  event.data.u64 = SocketTag(pair->id, side);
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, pair->fd[side], &event);
  pair->interest[side] = wanted;
}

void Relay::ClosePair(uint64_t id) {
  auto found = pairs_.find(id);
  if (found == pairs_.end()) return;
  for (int fd : found->second->fd) close(fd);  // also leaves the epoll set
  pairs_.erase(found);
}

void Relay::ArmTimer() {
  int64_t next = -1;
  for (const DelayLine& line : lines_) {
    if (!line.Empty() && (next < 0 || line.NextArrivalNs() < next)) next = line.NextArrivalNs();
  }
  itimerspec when = {};
  if (next >= 0) {
    next = std::max<int64_t>(next, 1);  // 0 would disarm
    when.it_value.tv_sec = next / 1000000000LL;
    when.it_value.tv_nsec = next % 1000000000LL;
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &when, nullptr);
}

}  // namespace stagio::link
