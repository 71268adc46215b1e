// ClientConnection: one client's connection to one stagio-iond, shared by every thread and
// every file of the process.
//
// Requests are pipelined: Start sends a request and returns at once; Finish waits for its
// reply. A reader thread takes replies off the socket in whatever order the daemon sends them
// and hands each to the caller waiting for its id. Sends are serialized by a mutex, so frames
// never interleave.
//
// A connection that fails (the daemon died, closed the connection, or sent a malformed reply)
// is broken for good: every request under way and every later one fails with an IOError naming
// the daemon. Callers fall back to direct storage; reconnecting would hide that a daemon lost
// the data it had accepted.
//
// Deadline. A daemon can also hang: alive, its socket open, but answering nothing (stopped,
// deadlocked, its storage stuck). With a timeout T, the connection breaks as above when a
// request has waited T for its reply and nothing at all came from the daemon in that time, and
// when a send, or the connect, makes no progress for T. A daemon that is only slow keeps
// sending replies to some request, so it is not taken for a hung one; T must still exceed the
// longest single request (a sync that writes back much dirty data to slow storage).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "common/status.h"
#include "net/address.h"
#include "net/frame.h"
#include "net/messages.h"
#include "net/socket.h"

namespace stagio {
namespace net {

class ClientConnection {
 public:
  // Connects and says Hello with `token`. Fails if the daemon cannot be reached, speaks
  // another protocol version, or refuses the token. `timeout` is the deadline described
  // above (zero: none); it bounds the connect and the Hello too.
  static Status Open(const Address& address, const std::string& token, Timeout timeout,
                     std::shared_ptr<ClientConnection>* connection);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // A request on its way; Finish it exactly once.
  struct Pending {
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::mutex mutex;
    std::condition_variable done_signal;
    bool done = false;
    Status status;
    std::string payload;
  };
  std::shared_ptr<Pending> Start(MessageType type, const std::string& payload);
  // Waits for the reply and returns its payload; fails if the connection broke, or breaks it
  // when the deadline passes.
  Status Finish(const std::shared_ptr<Pending>& pending, std::string* payload);

  // One request and its reply, decoded; also fails with the reply's own status.
  template <MessageType kType>
  Status Call(const typename MessageTypes<kType>::Request& request,
              typename MessageTypes<kType>::Reply* reply) {
    return FinishTyped<kType>(Start(kType, EncodePayload(request)), reply);
  }
  // Finish for a request started as message kType: decodes the reply, fails with its status.
  template <MessageType kType>
  Status FinishTyped(const std::shared_ptr<Pending>& pending,
                     typename MessageTypes<kType>::Reply* reply) {
    return FinishAs(pending, kType, reply);
  }
  // The same for a request of message `type` whose reply type is `Reply`, when the type is
  // known only at run time (Close, Flush, Sync and Invalidate all reply with a StatusReply).
  template <typename Reply>
  Status FinishAs(const std::shared_ptr<Pending>& pending, MessageType type, Reply* reply) {
    std::string payload;
    Status status = Finish(pending, &payload);
    if (!status.ok()) return status;
    status = DecodePayload(payload, reply, MessageName(static_cast<uint16_t>(type)));
    if (!status.ok()) {
      Break("malformed reply: " + status.message());
      return BrokenStatus();
    }
    return FromWire(reply->status);
  }

  bool broken() const { return broken_.load(); }
  const Address& address() const { return address_; }
  // What the daemon said about itself in Hello.
  const HelloReply& hello() const { return hello_; }

 private:
  ClientConnection(const Address& address, UniqueFd socket, Timeout timeout);
  void ReadReplies();
  // When the daemon last sent anything (or the connection opened).
  std::chrono::steady_clock::time_point LastHeard() const;
  // Marks the connection broken with `reason`, fails everything pending, wakes the reader.
  void Break(const std::string& reason);
  Status BrokenStatus();

  Address address_;
  UniqueFd socket_;
  const Timeout timeout_;
  std::atomic<std::chrono::steady_clock::rep> last_heard_;  // steady_clock ticks
  HelloReply hello_;
  std::mutex send_mutex_;
  std::mutex pending_mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<Pending>> pending_;
  uint64_t next_request_id_ = 1;
  std::atomic<bool> broken_{false};
  std::string broken_reason_;  // under pending_mutex_
  std::thread reader_;
};

}  // namespace net
}  // namespace stagio
