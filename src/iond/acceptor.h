// Acceptor: the daemon's listening sockets, and one thread that accepts on all of them.
//
// The thread sleeps in poll() over the listeners and a WakePipe; Stop wakes it through the pipe,
// which is how another thread (or the main thread after a signal) wakes it without closing a
// descriptor poll is using.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "iond/log.h"
#include "iond/wake_pipe.h"
#include "net/address.h"
#include "net/socket.h"

namespace stagio {
namespace iond {

class Acceptor {
 public:
  // Called on the accept thread with each new connection and a description of its peer.
  using OnAccept = std::function<void(net::UniqueFd socket, std::string peer)>;

  Acceptor() = default;
  ~Acceptor();
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;

  // Binds and listens on every address; on error nothing stays bound.
  Status Listen(const std::vector<net::Address>& addresses);
  // The addresses bound, in the order given (TCP: numeric, with the real port).
  const std::vector<net::Address>& bound() const { return bound_; }

  // Starts the accept thread. `on_idle` runs after each accepted connection and at least once
  // a second (the server reaps finished connections in it).
  Status Start(OnAccept on_accept, std::function<void()> on_idle, LogSink log);
  // Stops the thread, closes the listeners and removes the UNIX socket files they made.
  void Stop();

 private:
  void Run();

  std::vector<net::UniqueFd> listeners_;
  std::vector<net::Address> bound_;
  WakePipe wake_;
  OnAccept on_accept_;
  std::function<void()> on_idle_;
  LogSink log_;
  std::thread thread_;
};

// "10.0.0.5:40312", or for a UNIX socket "unix pid 42 uid 1000" (the kernel's word for who
// connected).
std::string DescribePeer(int fd);

}  // namespace iond
}  // namespace stagio
