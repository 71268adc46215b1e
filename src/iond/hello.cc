#include "iond/hello.h"

#include "iond/token.h"
#include "net/messages.h"

namespace stagio {
namespace iond {
namespace {

constexpr size_t kMaxClientName = 100;
// What gethostname may return (POSIX allows 255 bytes) and " pid 4294967295".
constexpr size_t kLongestClientName = 255 + 15;

// The client's name goes into log lines: printable ASCII only, and not too long.
std::string PrintableName(const std::string& name) {
  std::string printable;
  for (char c : name.substr(0, kMaxClientName)) printable += (c >= 32 && c < 127) ? c : '?';
  return printable;
}

}  // namespace

HelloVerdict JudgeHello(const net::Frame& frame, const HelloPolicy& policy,
                        const std::string& peer) {
  HelloVerdict verdict;
  verdict.name = "client at " + peer;
  verdict.request_id = frame.request_id;
  verdict.protocol_error = true;
  const char* message = net::MessageName(static_cast<uint16_t>(frame.type));
  if (frame.reply) {
    verdict.status = Status::InvalidArgument("it sent a reply frame (" + std::string(message) +
                                             "); clients send requests only");
    return verdict;
  }
  if (frame.type != net::MessageType::kHello) {
    verdict.status =
        Status::InvalidArgument("its first message is " + std::string(message) + ", not Hello");
    return verdict;
  }
  net::HelloRequest hello;
  Status status = net::DecodePayload(frame.payload, &hello, "Hello");
  if (!status.ok()) {
    verdict.status = Status::InvalidArgument("malformed payload: " + status.message());
    return verdict;
  }
  verdict.protocol_error = false;
  const std::string client = PrintableName(hello.client);
  if (!client.empty()) verdict.name = "client '" + client + "' at " + peer;
  if (hello.version != net::kProtocolVersion) {
    verdict.status = Status::InvalidArgument(
        "protocol version " + std::to_string(hello.version) + ", the daemon speaks " +
        std::to_string(net::kProtocolVersion));
  } else if (!policy.token.empty() && !TokensEqual(policy.token, hello.token)) {
    verdict.status = Status::InvalidArgument(hello.token.empty() ? "wrong token (none given)"
                                                                 : "wrong token");
  }
  return verdict;
}

std::string HelloReplyFrame(uint64_t request_id, const Status& status, uint64_t block_size) {
  net::HelloReply reply;
  reply.status = net::ToWire(status);
  reply.server = "stagio-iond " STAGIO_VERSION_STRING;
  reply.block_size = block_size;
  return net::EncodeFrame(net::MessageType::kHello, /*reply=*/true, request_id,
                          net::EncodePayload(reply));
}

size_t LargestClientHello(const std::string& token) {
  net::HelloRequest hello;
  hello.token = token;
  hello.client.assign(kLongestClientName, 'x');
  return net::EncodePayload(hello).size();
}

}  // namespace iond
}  // namespace stagio
