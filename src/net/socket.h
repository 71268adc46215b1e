// Stream sockets for the iond protocol: listening, connecting, and whole-buffer sends.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "common/status.h"
#include "net/address.h"

namespace stagio {
namespace net {

// Owns a file descriptor and closes it.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.Release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset();

 private:
  int fd_ = -1;
};

// Binds and listens. For TCP port 0 and for host names, *bound is the address actually bound
// (numeric, with the real port); for UNIX sockets a stale socket file is replaced.
Status Listen(const Address& address, UniqueFd* listener, Address* bound);
// How long a connect, or a send that makes no progress, may take; zero: as long as the
// kernel lets it (a blackholed TCP peer: minutes; a daemon whose socket backlog is full and
// that never accepts: forever).
using Timeout = std::chrono::milliseconds;

// Connects (TCP_NODELAY: frames are small and latency matters), within `timeout`.
Status Connect(const Address& address, UniqueFd* connection, Timeout timeout = Timeout::zero());
// From now on a send on `fd` fails once it has moved no byte for `timeout` (zero: never).
void SetSendTimeout(int fd, Timeout timeout);
// Sends every byte (retrying short sends and EINTR), without SIGPIPE. Fails if a send timeout
// set on `fd` passes without progress.
Status SendAll(int fd, const char* data, size_t size);
// Receives what is available, at most `capacity` bytes; *received 0 means the peer closed.
Status ReceiveSome(int fd, char* buffer, size_t capacity, size_t* received);
// Shuts both directions down, which wakes a thread blocked in recv on `fd`.
void ShutDown(int fd);

}  // namespace net
}  // namespace stagio
