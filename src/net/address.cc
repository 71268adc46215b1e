#include "net/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

namespace stagio {
namespace net {
namespace {

constexpr const char kUnixPrefix[] = "unix:";

Status Bad(const std::string& text, const std::string& why) {
  return Status::InvalidArgument("I/O-node address '" + text + "': " + why +
                                 " (expected host:port or unix:/path)");
}

}  // namespace

Status Address::Parse(const std::string& text, Address* address) {
  Address parsed;
  if (text.rfind(kUnixPrefix, 0) == 0) {
    parsed.kind = Kind::kUnix;
    parsed.path = text.substr(std::strlen(kUnixPrefix));
    if (parsed.path.empty()) return Bad(text, "no socket path");
    // sockaddr_un holds 108 bytes with the terminating zero.
    if (parsed.path.size() >= 108) return Bad(text, "socket path longer than 107 bytes");
    *address = parsed;
    return Status::OK();
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return Bad(text, "no port");
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return Bad(text, "no host");
  const std::string port_text = text.substr(colon + 1);
  char* end = nullptr;
  const long port = port_text.empty() ? -1 : std::strtol(port_text.c_str(), &end, 10);
  if (port < 0 || port > 65535 || (end && *end != '\0')) return Bad(text, "port is not 0-65535");
  parsed.kind = Kind::kTcp;
  parsed.host = host;
  parsed.port = static_cast<uint16_t>(port);
  *address = parsed;
  return Status::OK();
}

Status Address::ParseList(const std::string& text, std::vector<Address>* addresses) {
  addresses->clear();
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                          : comma - start);
    Address address;
    Status status = Parse(item, &address);
    if (!status.ok()) return status;
    addresses->push_back(address);
    if (comma == std::string::npos) return Status::OK();
    start = comma + 1;
  }
}

std::string Address::ToString() const {
  if (kind == Kind::kUnix) return kUnixPrefix + path;
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool IsLocalOnly(const Address& address) {
  if (address.kind == Address::Kind::kUnix) return true;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  if (getaddrinfo(address.host.c_str(), nullptr, &hints, &results) != 0) return false;
  bool all_loopback = results != nullptr;
  for (addrinfo* entry = results; entry; entry = entry->ai_next) {
    if (entry->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(entry->ai_addr);
      // 127.0.0.0/8
      all_loopback &= (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    } else if (entry->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(entry->ai_addr);
      all_loopback &= IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) != 0;
    } else {
      all_loopback = false;
    }
  }
  freeaddrinfo(results);
  return all_loopback;
}

}  // namespace net
}  // namespace stagio
