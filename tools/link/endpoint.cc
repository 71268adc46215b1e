// TCP endpoints: see endpoint.h.
#include "endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace stagio::link {
namespace {

std::string Describe(const Endpoint& endpoint) {
  return endpoint.host + ":" + std::to_string(endpoint.port);
}

[[noreturn]] void Fail(const std::string& what, const Endpoint& endpoint, int error) {
  throw EndpointError(what + " " + Describe(endpoint) + ": " + std::strerror(error));
}

using AddressList = std::unique_ptr<addrinfo, decltype(&freeaddrinfo)>;

AddressList Resolve(const Endpoint& endpoint, bool passive) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(endpoint.port);
  const int rc = getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    throw EndpointError("cannot resolve " + Describe(endpoint) + ": " + gai_strerror(rc));
  }
  return AddressList(found, freeaddrinfo);
}

}  // namespace

Endpoint ParseEndpoint(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw EndpointError("'" + text + "' is not HOST:PORT");
  }
  Endpoint endpoint;
  endpoint.host = text.substr(0, colon);
  if (endpoint.host.size() > 2 && endpoint.host.front() == '[' && endpoint.host.back() == ']') {
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  }
  const std::string port = text.substr(colon + 1);
  char* end = nullptr;
  const unsigned long value = std::strtoul(port.c_str(), &end, 10);
  if (*end != '\0' || port.find_first_not_of("0123456789") != std::string::npos ||
      value > 65535) {
    throw EndpointError("'" + text + "': the port must be a number from 0 to 65535");
  }
  endpoint.port = static_cast<uint16_t>(value);
  return endpoint;
}

void MakeRelayReady(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));  // fails harmlessly elsewhere
}

// Tries each address of `endpoint` in turn: a socket for it, then `set_up` (bind and listen,
// or connect), until one succeeds; returns that socket. Throws naming `what` otherwise.
template <typename SetUp>
int FirstWorkingSocket(const Endpoint& endpoint, bool passive, const char* what,
                       SetUp set_up) {
  const AddressList addresses = Resolve(endpoint, passive);
  int error = 0;
  for (const addrinfo* a = addresses.get(); a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && set_up(fd, a)) return fd;
    error = errno;
    if (fd >= 0) close(fd);
  }
  Fail(what, endpoint, error);
}

int ListenOn(const Endpoint& endpoint) {
  return FirstWorkingSocket(endpoint, /*passive=*/true, "cannot listen on",
                            [](int fd, const addrinfo* a) {
                              const int on = 1;
                              setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
                              if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 ||
                                  listen(fd, SOMAXCONN) != 0) {
                                return false;
                              }
                              fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                              return true;
                            });
}

int ConnectTo(const Endpoint& endpoint) {
  return FirstWorkingSocket(endpoint, /*passive=*/false, "cannot connect to",
                            [](int fd, const addrinfo* a) {
                              int rc;
                              do {
                                rc = connect(fd, a->ai_addr, a->ai_addrlen);
                              } while (rc != 0 && errno == EINTR);
                              if (rc != 0) return false;
                              MakeRelayReady(fd);
                              return true;
                            });
}

std::string LocalAddress(int fd) {
  sockaddr_storage address = {};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
    port = ntohs(v4->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
  inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
  port = ntohs(v6->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

}  // namespace stagio::link
