// Framing: every message travels as a 24-byte header and a payload.
//
//   offset  size  field
//        0     4  magic "SGIO"
//        4     2  protocol version (kProtocolVersion)
//        6     2  message type; replies set kReplyBit
//        8     8  request id, chosen by the client, echoed by the reply
//       16     4  payload length
//       20     4  reserved, zero
//
// All integers are little-endian. FrameDecoder takes bytes as they arrive from a stream and
// yields whole frames; it rejects a frame as soon as its header is wrong (bad magic, other
// version, unknown type, nonzero reserved field, payload longer than the limit), before
// buffering its payload, so a hostile peer cannot make it hold more than the limit.
//
// The limit may change between frames: the daemon holds a connection's first frame, the Hello,
// to a limit of a few KiB (a peer that has not shown the token must not make it buffer much),
// and raises it to kDefaultMaxPayload once the Hello is accepted. A reader that takes only
// needed() bytes off the socket at a time never holds a byte beyond the frame it is decoding,
// and never reads the payload of a frame whose header is refused.
//
// Copies. A large payload (a read's reply, a write's request, megabytes each) is the cost that
// matters: once its header is accepted, its bytes go straight into the string Next hands out,
// not through the decoder's buffer and a copy out of it. A reader that receives with Room and
// Commit puts them there from the socket, with no copy of its own at all. That string grows
// as the bytes arrive (its room is reserved, not filled), so a header alone costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "net/messages.h"

namespace stagio {
namespace net {

constexpr size_t kFrameHeaderSize = 24;
constexpr uint16_t kReplyBit = 0x8000;
// Large enough for the biggest request the client sends (see kMaxDataPerRequest) plus fields.
constexpr uint32_t kDefaultMaxPayload = 64u << 20;
// The client splits reads and writes into requests of at most this many data bytes.
constexpr uint32_t kMaxDataPerRequest = 16u << 20;

struct Frame {
  MessageType type = MessageType::kHello;
  bool reply = false;
  uint64_t request_id = 0;
  std::string payload;
};

// The header and payload of `frame`, ready to send.
std::string EncodeFrame(MessageType type, bool reply, uint64_t request_id,
                        const std::string& payload);

class FrameDecoder {
 public:
  explicit FrameDecoder(uint32_t max_payload = kDefaultMaxPayload) : max_payload_(max_payload) {}

  enum class Result { kFrame, kNeedMore, kMalformed };

  // Appends bytes received from the stream.
  void Feed(const char* data, size_t size);
  // Where to receive the next bytes of the stream into: room for *size bytes (at most the
  // *size asked for, at least 1; while a large payload is filling, no more than its rest). Then
  // Commit how many of them arrived, before any other call. Once Next said kMalformed, what is
  // committed is dropped.
  char* Room(size_t* size);
  void Commit(size_t received);
  // Takes the next whole frame out of what was fed. kMalformed is final: the stream cannot be
  // resynchronized, and *error says what was wrong.
  Result Next(Frame* frame, std::string* error);
  // Bytes fed but not yet returned as frames.
  size_t buffered() const {
    return end_ - consumed_ + (large() ? kFrameHeaderSize + large_filled_ : 0);
  }
  // After Next returned kNeedMore: how many more bytes Next needs before it can say more (the
  // rest of the header, or the rest of the frame whose header it accepted). Never more than
  // the header and the limit.
  size_t needed() const;
  // The largest payload the next frames may announce.
  void set_max_payload(uint32_t max_payload) { max_payload_ = max_payload; }
  // A decoder may be moved before its first bytes (the daemon hands the Hello's decoder to the
  // connection); a moved-from one is not used again.

  // Payloads at least this large are filled in place (see above).
  static constexpr size_t kLargePayload = 64 << 10;

 private:
  void Compact();
  Result Fail(std::string reason, std::string* error);

  uint32_t max_payload_;
  // Bytes fed: [consumed_, end_) not yet taken. The string only grows (past end_ it is room for
  // the next receives), so a receive does not zero-fill its room again.
  std::string buffer_;
  size_t consumed_ = 0;
  size_t end_ = 0;
  // The large frame being filled: its header (taken out of buffer_), its payload (zero-filled
  // ahead of what arrived as receives asked for room), the bytes that arrived, and the
  // announced length, 0 when no large frame is being filled (a large payload is never empty).
  bool large() const { return large_length_ != 0; }
  Frame large_frame_;
  size_t large_filled_ = 0;
  size_t large_length_ = 0;
  bool room_in_large_ = false;  // where the last Room was
  size_t room_size_ = 0;        // and how large
  bool broken_ = false;
  std::string broken_reason_;
};

}  // namespace net
}  // namespace stagio
