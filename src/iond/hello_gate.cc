#include "iond/hello_gate.h"

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/text.h"
#include "net/messages.h"

namespace stagio {
namespace iond {
namespace {

// At least this often the gate wakes, to write the summaries of the throttled log.
constexpr int kIdleMilliseconds = 1000;
constexpr size_t kScratchBytes = 4096;

const EventKind kBrokenBeforeHello{"closed", "connections that broke the protocol before Hello"};
const EventKind kFailedBeforeHello{"closed", "connections that failed before Hello"};
const EventKind kRefusedInHello{"refused", "clients for a wrong token or protocol version"};

}  // namespace

HelloGate::HelloGate(HelloGateLimits limits, HelloPolicy policy, ServerStats* stats, LogSink log)
    : limits_(limits),
      policy_(std::move(policy)),
      stats_(stats),
      log_(std::move(log)),
      scratch_(kScratchBytes) {}

HelloGate::~HelloGate() { Stop(); }

Status HelloGate::Start(OnGreeted on_greeted) {
  Status status = wake_.Open("the Hello gate");
  if (!status.ok()) return status;
  on_greeted_ = std::move(on_greeted);
  thread_ = std::thread([this] { Run(); });
  return Status::OK();
}

void HelloGate::Admit(net::UniqueFd socket, std::string peer) {
  Departure evicted;
  evicted.exit = Exit::kEvicted;
  bool evicting = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_ && waiting_.size() >= limits_.max_pending) {
      const auto victim = EvictionCandidate();
      if (victim != waiting_.end()) {
        evicted.waiting = Take(victim);
        evicting = true;
        break;
      }
      const uint64_t pass = passes_;
      wake_.Wake();
      pass_done_.wait(lock, [&] { return stopping_ || passes_ != pass; });
    }
    if (stopping_) return;  // the socket closes: the daemon is shutting down
    Waiting waiting;
    waiting.socket = std::move(socket);
    waiting.peer = std::move(peer);
    waiting.deadline = Clock::now() + limits_.deadline;
    waiting.decoder.set_max_payload(limits_.max_hello_bytes);
    waiting_.emplace(next_id_++, std::move(waiting));
  }
  wake_.Wake();  // the gate's thread polls the new socket from its next pass
  if (evicting) Settle(std::move(evicted));
}

void HelloGate::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  pass_done_.notify_all();
  if (thread_.joinable()) {
    wake_.Wake();
    thread_.join();
  }
  WaitingMap left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(waiting_);
    buffered_bytes_ = 0;
  }
  left.clear();  // closes them
  log_.Flush(Clock::now(), /*everything=*/true);
}

size_t HelloGate::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_.size();
}

uint64_t HelloGate::buffered_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return buffered_bytes_;
}

uint64_t HelloGate::peak_buffered_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_buffered_bytes_;
}

void HelloGate::Run() {
  std::vector<pollfd> watched;
  std::vector<uint64_t> ids;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
    }
    Pass(&watched, &ids);
  }
}

void HelloGate::Pass(std::vector<pollfd>* watched, std::vector<uint64_t>* ids) {
  watched->assign(1, pollfd{wake_.read_fd(), POLLIN, 0});
  ids->clear();
  int timeout = kIdleMilliseconds;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, waiting] : waiting_) {
      watched->push_back(pollfd{waiting.socket.get(), POLLIN, 0});
      ids->push_back(id);
    }
    if (!waiting_.empty()) {
      const auto until = std::chrono::ceil<std::chrono::milliseconds>(
          waiting_.begin()->second.deadline - Clock::now());
      timeout = static_cast<int>(std::clamp<int64_t>(until.count(), 0, timeout));
    }
  }
  if (::poll(watched->data(), watched->size(), timeout) < 0 && errno != EINTR) {
    // Only EINVAL or ENOMEM: wait instead of spinning, the sockets' deadlines still run.
    ::poll(nullptr, 0, 100);
  }
  if ((*watched)[0].revents != 0) wake_.Drain();
  std::vector<Departure> departures;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 1; i < watched->size(); ++i) {
      if ((*watched)[i].revents == 0) continue;
      // Admit may have evicted it since the poll began.
      const auto it = waiting_.find((*ids)[i - 1]);
      if (it == waiting_.end()) continue;
      Departure departure;
      if (!Receive(it->second, &departure)) continue;
      departure.waiting = Take(it);
      departures.push_back(std::move(departure));
    }
    const auto now = Clock::now();
    while (!waiting_.empty() && waiting_.begin()->second.deadline <= now) {
      Departure departure;
      departure.exit = Exit::kTimedOut;
      departure.waiting = Take(waiting_.begin());
      departures.push_back(std::move(departure));
    }
    ++passes_;
  }
  pass_done_.notify_all();
  for (Departure& departure : departures) Settle(std::move(departure));
  log_.Flush(Clock::now());
}

bool HelloGate::Receive(Waiting& waiting, Departure* departure) {
  while (true) {
    const size_t wanted = std::min(waiting.decoder.needed(), scratch_.size());
    const ssize_t got = ::recv(waiting.socket.get(), scratch_.data(), wanted, MSG_DONTWAIT);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      departure->exit = Exit::kFailed;
      departure->reason = std::string("recv: ") + std::strerror(errno);
      return true;
    }
    if (got == 0) {
      // A peer that connects and hangs up without a byte is no error (a port probe).
      departure->exit = waiting.decoder.buffered() > 0 ? Exit::kBroken : Exit::kHungUp;
      departure->reason = "the stream ended inside a frame (" +
                          std::to_string(waiting.decoder.buffered()) + " bytes of it received)";
      return true;
    }
    waiting.received += static_cast<uint64_t>(got);
    buffered_bytes_ += static_cast<uint64_t>(got);
    peak_buffered_bytes_ = std::max(peak_buffered_bytes_, buffered_bytes_);
    waiting.decoder.Feed(scratch_.data(), static_cast<size_t>(got));
    std::string error;
    switch (waiting.decoder.Next(&departure->frame, &error)) {
      case net::FrameDecoder::Result::kFrame:
        departure->exit = Exit::kHello;
        return true;
      case net::FrameDecoder::Result::kMalformed:
        departure->exit = Exit::kBroken;
        departure->reason = "malformed frame: " + error;
        return true;
      case net::FrameDecoder::Result::kNeedMore:
        break;
    }
  }
}

HelloGate::Waiting HelloGate::Take(WaitingMap::iterator it) {
  Waiting waiting = std::move(it->second);
  waiting_.erase(it);
  buffered_bytes_ -= waiting.received;
  return waiting;
}

HelloGate::WaitingMap::iterator HelloGate::EvictionCandidate() {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    int unread = 0;
    if (::ioctl(it->second.socket.get(), FIONREAD, &unread) != 0 || unread == 0) return it;
  }
  return waiting_.end();
}

void HelloGate::Settle(Departure departure) {
  const auto now = Clock::now();
  const std::string closing = "closing the connection of client at " + departure.waiting.peer;
  switch (departure.exit) {
    case Exit::kHello:
      Greet(departure);
      return;
    case Exit::kHungUp:
      return;
    case Exit::kBroken:
      stats_->CountDropped();
      log_.Log(kBrokenBeforeHello, closing + ": " + departure.reason, now);
      return;
    case Exit::kFailed:
      log_.Log(kFailedBeforeHello, closing + ": " + departure.reason, now);
      return;
    case Exit::kTimedOut: {
      stats_->CountHelloTimeout();
      const std::string deadline = DescribeDuration(limits_.deadline);
      log_.Log({"closed", "connections that did not say Hello within " + deadline},
               closing + ": no Hello within " + deadline + " (" +
                   std::to_string(departure.waiting.received) + " bytes of it received)",
               now);
      return;
    }
    case Exit::kEvicted: {
      stats_->CountEvicted();
      const std::string places = std::to_string(limits_.max_pending);
      log_.Log({"evicted", "connections that had not said Hello, to make room for newer ones "
                           "(at most " + places + " wait)"},
               closing + ": evicted to make room, as the oldest of the " + places +
                   " connections that have not said Hello",
               now);
      return;
    }
  }
}

void HelloGate::Greet(Departure& departure) {
  Waiting& waiting = departure.waiting;
  const HelloVerdict verdict = JudgeHello(departure.frame, policy_, waiting.peer);
  const std::string closing = "closing the connection of " + verdict.name + ": ";
  if (verdict.protocol_error) {
    stats_->CountDropped();
    log_.Log(kBrokenBeforeHello, closing + verdict.status.message(), Clock::now());
    return;
  }
  stats_->CountRequest(net::MessageType::kHello);
  Status status = verdict.status;
  EventKind refusal = kRefusedInHello;
  if (status.ok()) {
    GreetedSocket greeted;
    greeted.socket = std::move(waiting.socket);
    greeted.peer = waiting.peer;
    greeted.name = verdict.name;
    greeted.decoder = std::move(waiting.decoder);
    greeted.decoder.set_max_payload(net::kDefaultMaxPayload);
    greeted.hello_reply = HelloReplyFrame(verdict.request_id, status, policy_.block_size);
    status = on_greeted_(&greeted);
    if (status.ok()) return;
    waiting.socket = std::move(greeted.socket);
    stats_->CountOverCapacity();
    refusal = {"refused", "clients: " + status.message()};
  } else {
    stats_->CountRefused();
  }
  // A fresh socket's send buffer holds the small reply; if it does not, the close says enough.
  const std::string reply = HelloReplyFrame(verdict.request_id, status, policy_.block_size);
  ssize_t ignored = ::send(waiting.socket.get(), reply.data(), reply.size(),
                           MSG_DONTWAIT | MSG_NOSIGNAL);
  (void)ignored;
  log_.Log(refusal, closing + "refused: " + status.message(), Clock::now());
}

}  // namespace iond
}  // namespace stagio
