// Address: where a stagio-iond listens and where clients find it.
//
//   host:port        TCP, e.g. 127.0.0.1:7070, ionode3:7070, [::1]:7070 (port 0 = any free
//                    port, for listeners)
//   unix:/some/path  a UNIX domain socket, for a daemon on the same node
//
// A list (STAGIO_IOND, `stagio run --iond`) separates addresses with commas.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace stagio {
namespace net {

struct Address {
  enum class Kind { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;  // TCP: name or numeric address, without brackets
  uint16_t port = 0;
  std::string path;  // UNIX

  // Parses one address; the error names the text and what is wrong with it.
  static Status Parse(const std::string& text, Address* address);
  // Parses a comma-separated list; empty entries are errors.
  static Status ParseList(const std::string& text, std::vector<Address>* addresses);
  std::string ToString() const;
};

// True if every address `address` resolves to is a loopback address (or it is a UNIX socket):
// then only processes on this machine can reach a listener there.
bool IsLocalOnly(const Address& address);

}  // namespace net
}  // namespace stagio
