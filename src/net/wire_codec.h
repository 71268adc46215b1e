// Encoding and decoding of message payloads: little-endian integers, and strings and byte
// buffers as a u32 length followed by the bytes.
//
// A message struct lists its fields once with STAGIO_WIRE_FIELDS(a, b, c); Encode and Decode
// walk that list, so a field cannot be encoded and forgotten on the way back. Decoding checks
// every length against the bytes that remain and rejects trailing bytes: a payload that does
// not parse exactly is malformed, and the connection that sent it is closed.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/status.h"

namespace stagio {
namespace net {

#define STAGIO_WIRE_FIELDS(...)                         \
  template <typename Visitor>                           \
  void VisitFields(Visitor& visitor) {                  \
    visitor(__VA_ARGS__);                               \
  }                                                     \
  template <typename Visitor>                           \
  void VisitFields(Visitor& visitor) const {            \
    visitor(__VA_ARGS__);                               \
  }

class PayloadEncoder {
 public:
  explicit PayloadEncoder(std::string* out) : out_(out) {}

  template <typename... Fields>
  void operator()(const Fields&... fields) {
    (Put(fields), ...);
  }

 private:
  template <typename Integer>
  std::enable_if_t<std::is_integral_v<Integer>> Put(Integer value) {
    using Unsigned = std::make_unsigned_t<Integer>;
    Unsigned bits = static_cast<Unsigned>(value);
    for (size_t i = 0; i < sizeof(Integer); ++i) {
      out_->push_back(static_cast<char>(bits & 0xff));
      bits = static_cast<Unsigned>(bits >> 8);
    }
  }
  void Put(const std::string& bytes) {
    Put(static_cast<uint32_t>(bytes.size()));
    out_->append(bytes);
  }
  // A nested struct (WireStatus) goes field by field.
  template <typename Nested>
  auto Put(const Nested& nested) -> decltype(nested.VisitFields(*this), void()) {
    nested.VisitFields(*this);
  }

  std::string* out_;
};

class PayloadDecoder {
 public:
  PayloadDecoder(const char* data, size_t size) : data_(data), remaining_(size) {}

  template <typename... Fields>
  void operator()(Fields&... fields) {
    (Take(fields), ...);
  }

  // OK if every field parsed and no byte is left over.
  Status Finish(const char* what) const {
    if (!ok_) return Status::InvalidArgument(std::string(what) + ": payload is truncated");
    if (remaining_ != 0) {
      return Status::InvalidArgument(std::string(what) + ": " + std::to_string(remaining_) +
                                     " unexpected bytes after the last field");
    }
    return Status::OK();
  }

 private:
  template <typename Integer>
  std::enable_if_t<std::is_integral_v<Integer>> Take(Integer& value) {
    if (!ok_ || remaining_ < sizeof(Integer)) {
      ok_ = false;
      return;
    }
    using Unsigned = std::make_unsigned_t<Integer>;
    Unsigned bits = 0;
    for (size_t i = 0; i < sizeof(Integer); ++i) {
      bits |= static_cast<Unsigned>(static_cast<Unsigned>(static_cast<unsigned char>(data_[i]))
                                    << (8 * i));
    }
    value = static_cast<Integer>(bits);
    Advance(sizeof(Integer));
  }
  void Take(std::string& bytes) {
    uint32_t length = 0;
    Take(length);
    if (!ok_ || remaining_ < length) {
      ok_ = false;
      return;
    }
    bytes.assign(data_, length);
    Advance(length);
  }
  template <typename Nested>
  auto Take(Nested& nested) -> decltype(nested.VisitFields(*this), void()) {
    nested.VisitFields(*this);
  }
  void Advance(size_t count) {
    data_ += count;
    remaining_ -= count;
  }

  const char* data_;
  size_t remaining_;
  bool ok_ = true;
};

template <typename Message>
std::string EncodePayload(const Message& message) {
  std::string payload;
  PayloadEncoder encoder(&payload);
  message.VisitFields(encoder);
  return payload;
}

template <typename Message>
Status DecodePayload(const std::string& payload, Message* message, const char* what) {
  PayloadDecoder decoder(payload.data(), payload.size());
  message->VisitFields(decoder);
  return decoder.Finish(what);
}

}  // namespace net
}  // namespace stagio
