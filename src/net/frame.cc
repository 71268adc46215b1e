#include "net/frame.h"

#include <algorithm>
#include <cstring>

namespace stagio {
namespace net {
namespace {

constexpr char kMagic[4] = {'S', 'G', 'I', 'O'};

void PutLittleEndian(std::string* out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetLittleEndian(const char* data, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(data[i])) << (8 * i);
  }
  return value;
}

}  // namespace

std::string EncodeFrame(MessageType type, bool reply, uint64_t request_id,
                        const std::string& payload) {
  std::string frame;
  frame.reserve(kFrameHeaderSize + payload.size());
  frame.append(kMagic, sizeof(kMagic));
  PutLittleEndian(&frame, kProtocolVersion, 2);
  PutLittleEndian(&frame, static_cast<uint16_t>(type) | (reply ? kReplyBit : 0), 2);
  PutLittleEndian(&frame, request_id, 8);
  PutLittleEndian(&frame, payload.size(), 4);
  PutLittleEndian(&frame, 0, 4);
  frame.append(payload);
  return frame;
}

void FrameDecoder::Feed(const char* data, size_t size) {
  if (broken_) return;
  // Compact once the consumed prefix dominates, so a long-lived stream does not grow forever.
  if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(data, size);
}

size_t FrameDecoder::needed() const {
  if (buffered() < kFrameHeaderSize) return kFrameHeaderSize - buffered();
  const uint64_t length =
      std::min<uint64_t>(GetLittleEndian(buffer_.data() + consumed_ + 16, 4), max_payload_);
  const uint64_t frame = kFrameHeaderSize + length;
  return frame > buffered() ? static_cast<size_t>(frame - buffered()) : 0;
}

FrameDecoder::Result FrameDecoder::Next(Frame* frame, std::string* error) {
  if (broken_) {
    *error = broken_reason_;
    return Result::kMalformed;
  }
  if (buffered() < kFrameHeaderSize) return Result::kNeedMore;
  const char* header = buffer_.data() + consumed_;
  auto fail = [&](std::string reason) {
    broken_ = true;
    broken_reason_ = std::move(reason);
    buffer_.clear();
    consumed_ = 0;
    *error = broken_reason_;
    return Result::kMalformed;
  };
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) return fail("bad magic (not a stagio frame)");
  const uint64_t version = GetLittleEndian(header + 4, 2);
  if (version != kProtocolVersion) {
    return fail("protocol version " + std::to_string(version) + ", expected " +
                std::to_string(kProtocolVersion));
  }
  const uint16_t type_bits = static_cast<uint16_t>(GetLittleEndian(header + 6, 2));
  const uint16_t code = type_bits & static_cast<uint16_t>(~kReplyBit);
  if (!IsKnownMessage(code)) return fail("unknown message type " + std::to_string(code));
  const uint64_t length = GetLittleEndian(header + 16, 4);
  if (length > max_payload_) {
    return fail(std::string(MessageName(code)) + " payload of " + std::to_string(length) +
                " bytes exceeds the limit of " + std::to_string(max_payload_));
  }
  if (GetLittleEndian(header + 20, 4) != 0) return fail("reserved header field is not zero");
  if (buffered() < kFrameHeaderSize + length) {
    // Room for the rest of a frame whose header is valid: a large payload arrives in many
    // pieces, and growing the buffer piece by piece would copy it again at every doubling.
    buffer_.reserve(consumed_ + kFrameHeaderSize + length);
    return Result::kNeedMore;
  }

  frame->type = static_cast<MessageType>(code);
  frame->reply = (type_bits & kReplyBit) != 0;
  frame->request_id = GetLittleEndian(header + 8, 8);
  frame->payload.assign(header + kFrameHeaderSize, length);
  consumed_ += kFrameHeaderSize + length;
  return Result::kFrame;
}

}  // namespace net
}  // namespace stagio
