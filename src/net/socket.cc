#include "net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace stagio {
namespace net {
namespace {

Status SocketError(const std::string& what, const Address& address, int error) {
  return Status::IOError(what + " " + address.ToString() + ": " + std::strerror(error));
}

sockaddr_un UnixSocketAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  return address;
}

// Resolves a TCP address; the caller frees the list.
Status Resolve(const Address& address, bool passive, addrinfo** results) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string port = std::to_string(address.port);
  const int rc = getaddrinfo(address.host.c_str(), port.c_str(), &hints, results);
  if (rc != 0) {
    return Status::IOError("cannot resolve " + address.ToString() + ": " + gai_strerror(rc));
  }
  return Status::OK();
}

Address NumericAddressOf(const sockaddr* socket_address) {
  Address numeric;
  char text[INET6_ADDRSTRLEN] = {};
  if (socket_address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(socket_address);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    numeric.port = ntohs(in6->sin6_port);
  } else {
    const auto* in = reinterpret_cast<const sockaddr_in*>(socket_address);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    numeric.port = ntohs(in->sin_port);
  }
  numeric.host = text;
  return numeric;
}

Status ListenUnix(const Address& address, UniqueFd* listener, Address* bound) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return SocketError("socket for", address, errno);
  // A socket file left by a daemon that died would make bind fail; only sockets are removed.
  struct stat info {};
  if (::lstat(address.path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode)) {
    ::unlink(address.path.c_str());
  }
  const sockaddr_un socket_address = UnixSocketAddress(address.path);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&socket_address),
             sizeof(socket_address)) != 0) {
    return SocketError("bind", address, errno);
  }
  if (::listen(fd.get(), SOMAXCONN) != 0) return SocketError("listen on", address, errno);
  *listener = std::move(fd);
  *bound = address;
  return Status::OK();
}

// A daemon whose node crashed or was cut off sends no reset: without these the client would
// wait on it forever. Keepalive probes find an idle dead peer in about 25 s, and the user
// timeout fails a connection whose sent data stays unacknowledged for 30 s. Neither fires
// for a daemon that is merely slow: its kernel acknowledges what it receives.
void DetectDeadPeers(int fd) {
  const int on = 1, idle_s = 10, interval_s = 5, probes = 3;
  const unsigned int user_timeout_ms = 30000;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}

// connect(2) that gives up after `timeout` (if not zero), with errno ETIMEDOUT. The socket is
// non-blocking while it waits and blocking again after.
bool ConnectWithin(int fd, const sockaddr* address, socklen_t length, Timeout timeout) {
  int rc;
  if (timeout == Timeout::zero()) {
    do {
      rc = ::connect(fd, address, length);
    } while (rc != 0 && errno == EINTR);
    return rc == 0;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {  // rounded up, so that no wait ends before the deadline
    return std::chrono::ceil<Timeout>(deadline - std::chrono::steady_clock::now());
  };
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  rc = ::connect(fd, address, length);
  // A UNIX socket whose listener's backlog is full says EAGAIN at once: try again until the
  // deadline. A TCP connect in progress completes when the socket becomes writable.
  while (rc != 0 && errno == EAGAIN && left() > Timeout::zero()) {
    std::this_thread::sleep_for(std::min(left(), Timeout(10)));
    rc = ::connect(fd, address, length);
  }
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd watched{fd, POLLOUT, 0};
    int ready = 0;
    do {
      ready = ::poll(&watched, 1, static_cast<int>(std::max(left(), Timeout::zero()).count()));
    } while (ready < 0 && errno == EINTR);
    int error = ETIMEDOUT;
    socklen_t size = sizeof(error);
    if (ready > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
    errno = error;
    rc = error == 0 ? 0 : -1;
  } else if (rc != 0 && errno == EAGAIN) {
    errno = ETIMEDOUT;
  }
  const int saved = errno;
  ::fcntl(fd, F_SETFL, flags);
  errno = saved;
  return rc == 0;
}

// Resolves a TCP address and calls attempt(entry, fd) with a new socket for each resolved
// address in turn until one returns true; returns that socket, or the last errno in *error.
template <typename Attempt>
Status FirstWorkingSocket(const Address& address, bool passive, const char* what,
                          Attempt&& attempt, UniqueFd* socket_out) {
  addrinfo* results = nullptr;
  Status status = Resolve(address, passive, &results);
  if (!status.ok()) return status;
  int error = 0;
  for (addrinfo* entry = results; entry; entry = entry->ai_next) {
    UniqueFd fd(::socket(entry->ai_family, entry->ai_socktype | SOCK_CLOEXEC, entry->ai_protocol));
    if (!fd.valid() || !attempt(*entry, fd.get())) {
      error = errno;
      continue;
    }
    *socket_out = std::move(fd);
    freeaddrinfo(results);
    return Status::OK();
  }
  freeaddrinfo(results);
  return SocketError(what, address, error);
}

Status ListenTcp(const Address& address, UniqueFd* listener, Address* bound) {
  Status status = FirstWorkingSocket(
      address, true, "cannot listen on",
      [](const addrinfo& entry, int fd) {
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        return ::bind(fd, entry.ai_addr, entry.ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0;
      },
      listener);
  if (!status.ok()) return status;
  sockaddr_storage actual{};
  socklen_t length = sizeof(actual);
  ::getsockname(listener->get(), reinterpret_cast<sockaddr*>(&actual), &length);
  *bound = NumericAddressOf(reinterpret_cast<const sockaddr*>(&actual));
  return Status::OK();
}

}  // namespace

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status Listen(const Address& address, UniqueFd* listener, Address* bound) {
  return address.kind == Address::Kind::kUnix ? ListenUnix(address, listener, bound)
                                              : ListenTcp(address, listener, bound);
}

Status Connect(const Address& address, UniqueFd* connection, Timeout timeout) {
  if (address.kind == Address::Kind::kUnix) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return SocketError("socket for", address, errno);
    const sockaddr_un socket_address = UnixSocketAddress(address.path);
    if (!ConnectWithin(fd.get(), reinterpret_cast<const sockaddr*>(&socket_address),
                       sizeof(socket_address), timeout)) {
      return SocketError("cannot connect to", address, errno);
    }
    *connection = std::move(fd);
    return Status::OK();
  }
  return FirstWorkingSocket(
      address, false, "cannot connect to",
      [timeout](const addrinfo& entry, int fd) {
        if (!ConnectWithin(fd, entry.ai_addr, entry.ai_addrlen, timeout)) return false;
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        DetectDeadPeers(fd);
        return true;
      },
      connection);
}

void SetSendTimeout(int fd, Timeout timeout) {
  timeval limit{};
  limit.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  limit.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
}

Status SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return Status::IOError("send: the peer took no byte for the send timeout");
      }
      return Status::IOError(std::string("send: ") + std::strerror(errno));
    }
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return Status::OK();
}

Status ReceiveSome(int fd, char* buffer, size_t capacity, size_t* received) {
  while (true) {
    const ssize_t got = ::recv(fd, buffer, capacity, 0);
    if (got >= 0) {
      *received = static_cast<size_t>(got);
      return Status::OK();
    }
    if (errno == EINTR) continue;
    *received = 0;
    return Status::IOError(std::string("recv: ") + std::strerror(errno));
  }
}

void ShutDown(int fd) { ::shutdown(fd, SHUT_RDWR); }

}  // namespace net
}  // namespace stagio
