// Stream sockets for the iond protocol: listening, connecting, and whole-buffer sends.
#pragma once

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
// Connects (TCP_NODELAY: frames are small and latency matters).
Status Connect(const Address& address, UniqueFd* connection);
// Sends every byte (retrying short sends and EINTR), without SIGPIPE.
Status SendAll(int fd, const char* data, size_t size);
// Receives what is available, at most `capacity` bytes; *received 0 means the peer closed.
Status ReceiveSome(int fd, char* buffer, size_t capacity, size_t* received);
// Shuts both directions down, which wakes a thread blocked in recv on `fd`.
void ShutDown(int fd);

}  // namespace net
}  // namespace stagio
