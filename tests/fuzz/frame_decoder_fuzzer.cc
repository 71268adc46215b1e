// Fuzz target: net::FrameDecoder, fed a hostile byte stream in pieces of any size, with its
// payload limit changed between pieces as the daemon changes it after Hello.
//
// Checked, beyond "no crash, no undefined behaviour, no leak" (the sanitizers):
//   - no frame carries more payload than the limit in force;
//   - a frame encodes back (EncodeFrame) to bytes that decode to the same frame;
//   - once the stream is malformed it stays so, holds no bytes, and gives no more frames;
//   - while waiting for more, it holds less than a header and the limit (a hostile peer cannot
//     make it buffer more), and needed() asks for at least one byte and no more than that.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "net/frame.h"

namespace stagio {
namespace fuzz {
namespace {

using net::Frame;
using net::FrameDecoder;

// Small limits, so that the fuzzer reaches them.
constexpr uint32_t kLargestLimit = 512;

void RequireRoundTrip(const Frame& frame) {
  const std::string bytes =
      net::EncodeFrame(frame.type, frame.reply, frame.request_id, frame.payload);
  FrameDecoder again(static_cast<uint32_t>(frame.payload.size()));
  again.Feed(bytes.data(), bytes.size());
  Frame decoded;
  std::string error;
  Require(again.Next(&decoded, &error) == FrameDecoder::Result::kFrame,
          "an encoded frame does not decode");
  Require(decoded.type == frame.type && decoded.reply == frame.reply &&
              decoded.request_id == frame.request_id && decoded.payload == frame.payload,
          "a frame does not survive encoding and decoding");
  Require(again.buffered() == 0, "encoding a frame left bytes over");
}

}  // namespace
}  // namespace fuzz
}  // namespace stagio

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stagio;
  using namespace stagio::fuzz;
  FuzzedDataProvider input(data, size);
  uint32_t limit = input.ConsumeIntegralInRange<uint32_t>(0, kLargestLimit);
  FrameDecoder decoder(limit);
  bool broken = false;
  while (input.remaining_bytes() > 0) {
    if (input.ConsumeBool()) {
      limit = input.ConsumeIntegralInRange<uint32_t>(0, kLargestLimit);
      decoder.set_max_payload(limit);
    }
    const std::string piece = input.ConsumeBytesAsString(input.ConsumeIntegralInRange(1, 64));
    decoder.Feed(piece.data(), piece.size());
    net::Frame frame;
    std::string error;
    FrameDecoder::Result result;
    while ((result = decoder.Next(&frame, &error)) == FrameDecoder::Result::kFrame) {
      Require(!broken, "a frame after the stream was malformed");
      Require(frame.payload.size() <= limit, "a frame larger than the limit");
      RequireRoundTrip(frame);
    }
    if (result == FrameDecoder::Result::kMalformed) {
      Require(!error.empty(), "a malformed stream without a reason");
      Require(decoder.buffered() == 0, "a malformed stream still holds bytes");
      broken = true;
      continue;
    }
    Require(!broken, "a malformed stream recovered");
    Require(decoder.buffered() < net::kFrameHeaderSize + limit + 1,
            "waiting for more while holding more than a frame");
    Require(decoder.needed() >= 1, "waiting for more but needing nothing");
    Require(decoder.buffered() + decoder.needed() <= net::kFrameHeaderSize + limit,
            "needing more than the rest of a frame");
  }
  return 0;
}
