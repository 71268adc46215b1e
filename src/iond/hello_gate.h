// HelloGate: holds every new connection until it has said Hello, on one thread for all of them.
//
// Why. A connection that has not shown the token must cost the daemon next to nothing, or anyone
// who can reach a listener locks the clients out. A Connection costs two threads and may
// buffer a 64 MiB frame; if every accepted socket got one at once, peers that never spoke (or
// spoke one byte a second) would hold every slot and their threads for as long as they liked.
//
// How. The acceptor hands each new socket to Admit. The gate's thread sleeps in poll() over the
// waiting sockets and a WakePipe (Admit and Stop wake it, as Stop does the acceptor), and reads
// from each socket only what its Hello still needs (FrameDecoder::needed): never a byte past
// the Hello, and not the payload of a header that announces more than the Hello limit. A
// complete Hello is judged (hello.h); a refused one is answered and closed; an accepted one is
// handed to the server (OnGreeted), which starts its Connection or, when it serves
// max_connections already, turns it down, and the gate answers with that refusal.
//
// Bounds. Per waiting socket: a descriptor, at most a frame header and the Hello limit of
// received bytes, and a deadline counted from accept for the whole Hello (a peer that dribbles
// a byte a second is closed at the deadline, as one that sends nothing is). At most
// max_pending sockets wait; see Admit for who makes room. Log lines about these sockets go
// through a ThrottledLog: a flood costs a few lines a minute, not one per connection.
#pragma once

#include <poll.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "iond/hello.h"
#include "iond/log.h"
#include "iond/server_stats.h"
#include "iond/throttled_log.h"
#include "iond/wake_pipe.h"
#include "net/frame.h"
#include "net/socket.h"

namespace stagio {
namespace iond {

struct HelloGateLimits {
  std::chrono::milliseconds deadline{10000};
  uint32_t max_hello_bytes = 4096;  // Hello payload
  size_t max_pending = 128;
};

class HelloGate {
 public:
  using Clock = std::chrono::steady_clock;
  // Called on the gate's thread with each accepted Hello. Takes the socket (moves it out of
  // *greeted) and returns OK, or returns why the client cannot be served, leaving *greeted
  // alone; the gate then sends that status as the Hello reply and closes.
  using OnGreeted = std::function<Status(GreetedSocket* greeted)>;

  HelloGate(HelloGateLimits limits, HelloPolicy policy, ServerStats* stats, LogSink log);
  ~HelloGate();  // Stop
  HelloGate(const HelloGate&) = delete;
  HelloGate& operator=(const HelloGate&) = delete;

  Status Start(OnGreeted on_greeted);
  // From the accept thread: holds `socket` until it says Hello, or its deadline passes.
  //
  // When max_pending sockets wait already, the oldest one that has no bytes waiting to be read
  // is closed to make room. Refusing the newcomer instead would let a flood hold every place
  // for good (each idle peer replaced by the next before its deadline) and keep the clients
  // out. Evicting the oldest, a client is lost only if max_pending newer connections arrive
  // between its connect and its Hello, which follows in one round trip: with 128 places and a
  // 100 us round trip on a cluster network, the flood must open over a million connections a
  // second. A socket whose bytes have arrived is not idle, only not read yet (a job's ranks
  // all connect at once, faster than the gate starts their Connections): if every waiting
  // socket has bytes waiting, Admit waits for the gate's next pass instead of closing a client
  // whose Hello is there.
  void Admit(net::UniqueFd socket, std::string peer);
  // Stops the thread, closes every socket still waiting, and logs the throttled lines' counts.
  void Stop();

  // Sockets waiting for their Hello.
  size_t pending() const;
  // Bytes received from waiting sockets and held for their Hello: now, and the most so far.
  uint64_t buffered_bytes() const;
  uint64_t peak_buffered_bytes() const;

 private:
  struct Waiting {
    net::UniqueFd socket;
    std::string peer;
    Clock::time_point deadline;
    net::FrameDecoder decoder;
    uint64_t received = 0;  // bytes fed to the decoder
  };
  // Why a socket leaves the gate.
  enum class Exit { kHello, kBroken, kFailed, kHungUp, kTimedOut, kEvicted };
  struct Departure {
    Waiting waiting;
    Exit exit = Exit::kHungUp;
    net::Frame frame;    // kHello
    std::string reason;  // kBroken, kFailed
  };
  using WaitingMap = std::map<uint64_t, Waiting>;  // by arrival: the first is the oldest

  void Run();
  // One pass: polls, reads what is ready, collects who leaves; then settles them unlocked.
  void Pass(std::vector<pollfd>* watched, std::vector<uint64_t>* ids);
  // Reads what the socket's Hello still needs; true when it leaves (departure->exit says why).
  bool Receive(Waiting& waiting, Departure* departure);
  // Takes a socket out of the map, and its bytes out of the count. Needs mutex_.
  Waiting Take(WaitingMap::iterator it);
  // The oldest waiting socket with no bytes waiting to be read; end() if there is none.
  WaitingMap::iterator EvictionCandidate();
  // Replies, hands over, closes, counts and logs; without mutex_.
  void Settle(Departure departure);
  void Greet(Departure& departure);

  const HelloGateLimits limits_;
  const HelloPolicy policy_;
  ServerStats* const stats_;
  ThrottledLog log_;
  OnGreeted on_greeted_;
  WakePipe wake_;
  std::vector<char> scratch_;  // the gate thread's receive buffer, shared by every socket

  mutable std::mutex mutex_;
  std::condition_variable pass_done_;
  WaitingMap waiting_;
  uint64_t next_id_ = 0;
  uint64_t passes_ = 0;
  uint64_t buffered_bytes_ = 0;
  uint64_t peak_buffered_bytes_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace iond
}  // namespace stagio
