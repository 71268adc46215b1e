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

void FrameDecoder::Compact() {
  // Once the consumed prefix is at least half of what is held, move the rest to the front, so
  // a long-lived stream does not grow forever and each byte moves about once.
  if (consumed_ > 0 && consumed_ >= end_ - consumed_) {
    std::memmove(buffer_.data(), buffer_.data() + consumed_, end_ - consumed_);
    end_ -= consumed_;
    consumed_ = 0;
  }
}

void FrameDecoder::Feed(const char* data, size_t size) {
  while (size > 0 && !broken_) {
    size_t room = size;
    char* into = Room(&room);
    std::memcpy(into, data, room);
    Commit(room);
    data += room;
    size -= room;
  }
}

char* FrameDecoder::Room(size_t* size) {
  *size = std::max<size_t>(*size, 1);
  std::string& payload = large_frame_.payload;
  room_in_large_ = large_filled_ < large_length_;  // a large payload still filling
  if (room_in_large_) {
    // Grown to what may arrive now, within the room reserved when the header was accepted;
    // it never shrinks back, so no byte is zero-filled twice.
    *size = std::min(*size, large_length_ - large_filled_);
    if (payload.size() < large_filled_ + *size) payload.resize(large_filled_ + *size);
    room_size_ = *size;
    return payload.data() + large_filled_;
  }
  // After a large payload is whole, the bytes that follow it are the next frames'.
  Compact();
  if (buffer_.size() < end_ + *size) buffer_.resize(end_ + *size);
  room_size_ = *size;
  return buffer_.data() + end_;
}

void FrameDecoder::Commit(size_t received) {
  const size_t room = room_size_;
  room_size_ = 0;
  received = std::min(received, room);
  if (room_in_large_) {
    large_filled_ += received;
  } else if (!broken_) {
    end_ += received;
  }
}

size_t FrameDecoder::needed() const {
  if (large()) return large_length_ - large_filled_;
  if (buffered() < kFrameHeaderSize) return kFrameHeaderSize - buffered();
  const uint64_t length =
      std::min<uint64_t>(GetLittleEndian(buffer_.data() + consumed_ + 16, 4), max_payload_);
  const uint64_t frame = kFrameHeaderSize + length;
  return frame > buffered() ? static_cast<size_t>(frame - buffered()) : 0;
}

FrameDecoder::Result FrameDecoder::Fail(std::string reason, std::string* error) {
  broken_ = true;
  broken_reason_ = std::move(reason);
  buffer_ = std::string();
  consumed_ = end_ = 0;
  large_filled_ = large_length_ = 0;
  large_frame_.payload = std::string();
  *error = broken_reason_;
  return Result::kMalformed;
}

FrameDecoder::Result FrameDecoder::Next(Frame* frame, std::string* error) {
  if (broken_) {
    *error = broken_reason_;
    return Result::kMalformed;
  }
  if (large()) {
    if (large_filled_ < large_length_) return Result::kNeedMore;
    *frame = std::move(large_frame_);
    large_frame_ = Frame();
    large_filled_ = large_length_ = 0;
    return Result::kFrame;
  }
  if (buffered() < kFrameHeaderSize) return Result::kNeedMore;
  const char* header = buffer_.data() + consumed_;
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return Fail("bad magic (not a stagio frame)", error);
  }
  const uint64_t version = GetLittleEndian(header + 4, 2);
  if (version != kProtocolVersion) {
    return Fail("protocol version " + std::to_string(version) + ", expected " +
                    std::to_string(kProtocolVersion),
                error);
  }
  const uint16_t type_bits = static_cast<uint16_t>(GetLittleEndian(header + 6, 2));
  const uint16_t code = type_bits & static_cast<uint16_t>(~kReplyBit);
  if (!IsKnownMessage(code)) return Fail("unknown message type " + std::to_string(code), error);
  const uint64_t length = GetLittleEndian(header + 16, 4);
  if (length > max_payload_) {
    return Fail(std::string(MessageName(code)) + " payload of " + std::to_string(length) +
                    " bytes exceeds the limit of " + std::to_string(max_payload_),
                error);
  }
  if (GetLittleEndian(header + 20, 4) != 0) return Fail("reserved header field is not zero", error);

  Frame decoded;
  decoded.type = static_cast<MessageType>(code);
  decoded.reply = (type_bits & kReplyBit) != 0;
  decoded.request_id = GetLittleEndian(header + 8, 8);
  const size_t have = buffered() - kFrameHeaderSize;
  if (have < length && length >= kLargePayload) {
    // A large payload still arriving: it gets its own string, and the rest of it goes there.
    decoded.payload.reserve(length);
    decoded.payload.assign(header + kFrameHeaderSize, have);
    consumed_ += kFrameHeaderSize + have;
    large_frame_ = std::move(decoded);
    large_filled_ = have;
    large_length_ = length;
    return Result::kNeedMore;
  }
  if (have < length) return Result::kNeedMore;
  decoded.payload.assign(header + kFrameHeaderSize, length);
  consumed_ += kFrameHeaderSize + length;
  *frame = std::move(decoded);
  return Result::kFrame;
}

}  // namespace net
}  // namespace stagio
