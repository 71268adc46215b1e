// The Hello exchange: what the daemon makes of a connection's first frame, the reply it sends,
// and what a socket past Hello carries on to its Connection.
//
// The first frame must be a Hello request with the daemon's protocol version and, if the
// daemon has one, its token. Anything else (another message, a reply frame, a payload that
// does not decode) breaks the protocol: the connection is closed without a reply. A wrong
// version or token is a refusal: it is answered, so the client can log why, and then closed.
// HelloGate (hello_gate.h) applies this to every new connection before it costs a thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "net/frame.h"
#include "net/socket.h"

namespace stagio {
namespace iond {

// What the daemon checks a Hello against, and tells the client in the reply.
struct HelloPolicy {
  std::string token;  // empty: none required
  uint64_t block_size = 0;
};

struct HelloVerdict {
  // OK: the client may go on. Otherwise why it is turned away.
  Status status;
  // The client broke the protocol: no reply goes out and it counts as dropped. Otherwise a
  // refusal (wrong version or token), which is answered and counts as refused.
  bool protocol_error = false;
  // "client 'node3 pid 77' at 10.0.0.5:40312" once the Hello named it, else "client at ...".
  std::string name;
  uint64_t request_id = 0;
};

// Judges the first frame of the connection from `peer` ("10.0.0.5:40312"). The token
// comparison takes the same time whatever bytes differ (TokensEqual).
HelloVerdict JudgeHello(const net::Frame& frame, const HelloPolicy& policy,
                        const std::string& peer);

// The encoded Hello reply frame for `status` (OK or why the client is refused).
std::string HelloReplyFrame(uint64_t request_id, const Status& status, uint64_t block_size);

// The payload size of the largest Hello a stagio client sends with `token`: its name is the
// host name (at most 255 bytes) and pid. The Hello limit must hold it.
size_t LargestClientHello(const std::string& token);

// A socket whose Hello was accepted, on its way from the gate to a Connection.
struct GreetedSocket {
  net::UniqueFd socket;
  std::string peer;  // as DescribePeer gave it
  std::string name;  // HelloVerdict::name
  // Holds whatever the gate received after the Hello (the gate reads no further than the
  // Hello, so normally nothing); its limit is already the general one.
  net::FrameDecoder decoder;
  std::string hello_reply;  // the accepting reply, to go out before any other
};

}  // namespace iond
}  // namespace stagio
