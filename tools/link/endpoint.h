// TCP endpoints of stagio-link: "HOST:PORT" (or "[v6addr]:PORT"), listening and connecting.
// Failures throw EndpointError with a message naming the endpoint and the system's reason.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace stagio::link {

struct EndpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string host;  // without brackets
  uint16_t port = 0;
};

// Parses "HOST:PORT"; port 0 is allowed (a listener then takes any free port).
Endpoint ParseEndpoint(const std::string& text);

// A non-blocking listening socket bound to `endpoint` (SO_REUSEADDR).
int ListenOn(const Endpoint& endpoint);

// A connected, non-blocking socket with TCP_NODELAY; the connect itself blocks.
int ConnectTo(const Endpoint& endpoint);

// "HOST:PORT" of a socket's own address: the port a listener on port 0 got.
std::string LocalAddress(int fd);

// Sets O_NONBLOCK and, for TCP sockets, TCP_NODELAY: the relay decides when bytes go, so the
// kernel must not hold small ones back (Nagle) on either side of it.
void MakeRelayReady(int fd);

}  // namespace stagio::link
