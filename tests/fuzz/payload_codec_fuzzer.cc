// Fuzz target: the payload codec, on every request and reply of the message table.
//
// The first byte picks the message and direction (request or reply, in the table's order, so
// a message added to STAGIO_IOND_MESSAGES is fuzzed without a change here); the rest is the
// payload. Checked, beyond "no crash, no undefined behaviour, no huge allocation" (a length
// field is trusted only up to the bytes that follow it):
//   - the codec is canonical: a payload that decodes encodes back to exactly the same bytes;
//   - a status that decodes is a success only if its code says so (FromWire never turns an
//     unknown code into success).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "net/messages.h"

namespace stagio {
namespace fuzz {
namespace {

// Replies carry a status; requests do not.
template <typename Message>
auto RequireStatusMeaning(const Message& message, int) -> decltype(message.status, void()) {
  Require(net::FromWire(message.status).ok() == (message.status.code == 0),
          "a status code and its meaning disagree");
}
template <typename Message>
void RequireStatusMeaning(const Message&, long) {}

template <typename Message>
void RoundTrip(const std::string& payload, const char* name) {
  Message decoded;
  if (!net::DecodePayload(payload, &decoded, name).ok()) return;
  Require(net::EncodePayload(decoded) == payload, "a decoded payload encodes differently");
  RequireStatusMeaning(decoded, 0);
}

#define STAGIO_COUNT_MESSAGE(name, code, request, reply) +1
constexpr int kMessages = 0 STAGIO_IOND_MESSAGES(STAGIO_COUNT_MESSAGE);
#undef STAGIO_COUNT_MESSAGE

}  // namespace
}  // namespace fuzz
}  // namespace stagio

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stagio;
  using namespace stagio::fuzz;
  if (size == 0) return 0;
  const int wanted = data[0] % (2 * kMessages);
  const std::string payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  int index = 0;
#define STAGIO_FUZZ_MESSAGE(name, code, Request, Reply)                         \
  if (index++ == wanted) RoundTrip<net::Request>(payload, #name " request");  \
  if (index++ == wanted) RoundTrip<net::Reply>(payload, #name " reply");
  STAGIO_IOND_MESSAGES(STAGIO_FUZZ_MESSAGE)
#undef STAGIO_FUZZ_MESSAGE
  return 0;
}
