// The iond protocol (src/net): every message of STAGIO_IOND_MESSAGES round-trips through the
// payload codec and the framing, decoding rejects truncated and padded payloads, and the frame
// decoder rejects a bad header before the payload arrives.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "net/frame.h"
#include "net/messages.h"
#include "net/wire_codec.h"

namespace stagio {
namespace net {
namespace {

// Gives every field of a message a value unlike its default: integers from the seed, strings
// of seeded bytes (with NULs and high bytes), nested structs field by field.
class Filler {
 public:
  explicit Filler(uint32_t seed) : random_(seed) {}
  template <typename... Fields>
  void operator()(Fields&... fields) {
    (Fill(fields), ...);
  }

 private:
  template <typename Integer>
  std::enable_if_t<std::is_integral_v<Integer>> Fill(Integer& value) {
    // Never zero, and using the top byte, so a dropped or shortened field shows.
    value = static_cast<Integer>(random_() | 1 | (Integer{1} << (sizeof(Integer) * 8 - 1)));
  }
  void Fill(std::string& bytes) {
    bytes.resize(1 + random_() % 40);
    for (char& c : bytes) c = static_cast<char>(random_());
    bytes[0] = '\0';
  }
  template <typename Nested>
  auto Fill(Nested& nested) -> decltype(nested.VisitFields(*this), void()) {
    nested.VisitFields(*this);
  }

  std::mt19937_64 random_;
};

template <typename Message>
Message Filled(uint32_t seed) {
  Message message;
  Filler filler(seed);
  message.VisitFields(filler);
  return message;
}

// Checks one message body (a request or a reply) of message `type`.
template <typename Message>
void CheckBody(MessageType type, bool reply) {
  const char* name = MessageName(static_cast<uint16_t>(type));
  SCOPED_TRACE(std::string(name) + (reply ? " reply" : " request"));
  const Message original = Filled<Message>(static_cast<uint32_t>(type) * 2 + reply);
  const std::string payload = EncodePayload(original);
  ASSERT_NE(payload, EncodePayload(Message())) << "the filled message looks like a default one";

  // Payload round trip: decoding then encoding again gives the same bytes, field for field.
  Message decoded;
  ASSERT_TRUE(DecodePayload(payload, &decoded, name).ok());
  EXPECT_EQ(EncodePayload(decoded), payload);

  // Every proper prefix is truncated, and one byte more is left over.
  for (size_t length = 0; length < payload.size(); ++length) {
    Message partial;
    const Status status = DecodePayload(payload.substr(0, length), &partial, name);
    ASSERT_FALSE(status.ok()) << "a prefix of " << length << " bytes decoded";
    EXPECT_NE(status.message().find("truncated"), std::string::npos) << status.message();
  }
  Message padded;
  const Status status = DecodePayload(payload + "x", &padded, name);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("unexpected bytes"), std::string::npos) << status.message();

  // Frame round trip, fed one byte at a time: nothing before the last byte, then the frame.
  const uint64_t id = 0x0123456789abcdefull + static_cast<uint64_t>(type);
  const std::string frame = EncodeFrame(type, reply, id, payload);
  ASSERT_EQ(frame.size(), kFrameHeaderSize + payload.size());
  FrameDecoder decoder;
  Frame out;
  std::string error;
  for (size_t i = 0; i < frame.size(); ++i) {
    ASSERT_EQ(decoder.Next(&out, &error), FrameDecoder::Result::kNeedMore) << "at byte " << i;
    decoder.Feed(&frame[i], 1);
  }
  ASSERT_EQ(decoder.Next(&out, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_EQ(out.type, type);
  EXPECT_EQ(out.reply, reply);
  EXPECT_EQ(out.request_id, id);
  EXPECT_EQ(out.payload, payload);
  EXPECT_EQ(decoder.buffered(), 0u);
  EXPECT_EQ(decoder.Next(&out, &error), FrameDecoder::Result::kNeedMore);
}

TEST(NetProtocolTest, EveryMessageRoundTrips) {
  int messages = 0;
#define STAGIO_CHECK_MESSAGE(name, code, request, reply)  \
  CheckBody<request>(MessageType::k##name, false);         \
  CheckBody<reply>(MessageType::k##name, true);            \
  EXPECT_STREQ(MessageName(code), #name);                  \
  EXPECT_TRUE(IsKnownMessage(code));                       \
  ++messages;
  STAGIO_IOND_MESSAGES(STAGIO_CHECK_MESSAGE)
#undef STAGIO_CHECK_MESSAGE
  EXPECT_EQ(messages, 9);
  EXPECT_FALSE(IsKnownMessage(0));
  EXPECT_STREQ(MessageName(0), "unknown");
}

TEST(NetProtocolTest, SeveralFramesInOneBufferComeOutInOrder) {
  std::string stream;
  for (uint64_t id = 1; id <= 5; ++id) {
    stream += EncodeFrame(MessageType::kStat, false, id, std::string(id * 3, 'a'));
  }
  FrameDecoder decoder;
  decoder.Feed(stream.data(), stream.size());
  Frame frame;
  std::string error;
  for (uint64_t id = 1; id <= 5; ++id) {
    ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame);
    EXPECT_EQ(frame.request_id, id);
    EXPECT_EQ(frame.payload, std::string(id * 3, 'a'));
  }
  EXPECT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kNeedMore);
}

TEST(NetProtocolTest, WireStatusKeepsCodeAndMessage) {
  const Status original = Status::NotFound("no such file");
  const Status back = FromWire(ToWire(original));
  EXPECT_EQ(back.code(), Status::Code::kNotFound);
  EXPECT_EQ(back.message(), "no such file");
  EXPECT_TRUE(FromWire(ToWire(Status::OK())).ok());
  // A code this side does not know is a failure, never success.
  WireStatus unknown;
  unknown.code = 200;
  unknown.message = "new";
  EXPECT_FALSE(FromWire(unknown).ok());
}

// ---- Headers rejected before the payload: the decoder is given the header alone.

std::string HeaderOf(const std::string& frame) { return frame.substr(0, kFrameHeaderSize); }

void ExpectRejectedHeader(const std::string& header, const std::string& reason,
                          uint32_t max_payload = kDefaultMaxPayload) {
  SCOPED_TRACE(reason);
  FrameDecoder decoder(max_payload);
  decoder.Feed(header.data(), header.size());
  Frame frame;
  std::string error;
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kMalformed);
  EXPECT_NE(error.find(reason), std::string::npos) << error;
  // Final: more bytes, even a good frame, do not revive it.
  const std::string good = EncodeFrame(MessageType::kStat, false, 1, "");
  decoder.Feed(good.data(), good.size());
  EXPECT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kMalformed);
  EXPECT_EQ(decoder.buffered(), 0u) << "a broken decoder holds no bytes";
}

TEST(NetProtocolTest, BadHeadersAreRejectedBeforeThePayload) {
  const std::string frame = EncodeFrame(MessageType::kWriteBlocks, false, 7, std::string(100, 'x'));
  std::string header = HeaderOf(frame);

  std::string bad_magic = header;
  bad_magic[0] = 'X';
  ExpectRejectedHeader(bad_magic, "bad magic");

  std::string bad_version = header;
  bad_version[4] = static_cast<char>(kProtocolVersion + 1);
  ExpectRejectedHeader(bad_version, "protocol version");

  std::string unknown_type = header;
  unknown_type[6] = 0x7f;
  unknown_type[7] = 0;
  ExpectRejectedHeader(unknown_type, "unknown message type");

  std::string reserved = header;
  reserved[20] = 1;
  ExpectRejectedHeader(reserved, "reserved");

  // A payload over the limit: the decoder says so with only the header in hand.
  ExpectRejectedHeader(header, "exceeds the limit", /*max_payload=*/99);
  std::string huge = header;
  huge[16] = huge[17] = huge[18] = huge[19] = static_cast<char>(0xff);  // 4 GiB - 1
  ExpectRejectedHeader(huge, "exceeds the limit");
}

TEST(NetProtocolTest, ALimitSizedPayloadIsAccepted) {
  const std::string frame = EncodeFrame(MessageType::kWriteBlocks, false, 7, std::string(99, 'x'));
  FrameDecoder decoder(99);
  decoder.Feed(frame.data(), frame.size());
  Frame out;
  std::string error;
  EXPECT_EQ(decoder.Next(&out, &error), FrameDecoder::Result::kFrame) << error;
}

// The daemon's Hello phase: a reader that takes needed() bytes at a time holds at most one
// frame, never reads the payload of a header over the limit, and raises the limit afterwards.
TEST(NetProtocolTest, NeededBytesAndAPerPhaseLimit) {
  const std::string hello = EncodeFrame(MessageType::kHello, false, 1, std::string(40, 'h'));
  const std::string write = EncodeFrame(MessageType::kWriteBlocks, false, 2, std::string(500, 'w'));
  FrameDecoder decoder(64);  // the Hello phase's limit
  Frame frame;
  std::string error;
  EXPECT_EQ(decoder.needed(), kFrameHeaderSize);
  decoder.Feed(hello.data(), 10);
  EXPECT_EQ(decoder.needed(), kFrameHeaderSize - 10);
  decoder.Feed(hello.data() + 10, kFrameHeaderSize - 10);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kNeedMore);
  EXPECT_EQ(decoder.needed(), 40u) << "the payload the accepted header announced";
  decoder.Feed(hello.data() + kFrameHeaderSize, 40);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_EQ(decoder.needed(), kFrameHeaderSize);

  // Past the Hello, the general limit: the same decoder takes a frame its first limit refuses.
  FrameDecoder strict = decoder;
  strict.Feed(write.data(), kFrameHeaderSize);
  EXPECT_EQ(strict.Next(&frame, &error), FrameDecoder::Result::kMalformed);
  EXPECT_NE(error.find("WriteBlocks payload of 500 bytes exceeds the limit of 64"),
            std::string::npos)
      << error;
  decoder.set_max_payload(kDefaultMaxPayload);
  decoder.Feed(write.data(), write.size());
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_EQ(frame.payload, std::string(500, 'w'));
}

// A large payload is filled in place: a reader receiving through Room and Commit is offered
// room within the payload until it is whole (and never past it), then in the buffer for what
// follows; frames and their order come out as with Feed, and so do the bytes read around it.
TEST(NetProtocolTest, LargePayloadsAreFilledInPlaceThroughRoomAndCommit) {
  std::string big(3 * FrameDecoder::kLargePayload + 5, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  const std::string stream = EncodeFrame(MessageType::kReadBlocks, true, 1, "small") +
                             EncodeFrame(MessageType::kReadBlocks, true, 2, big) +
                             EncodeFrame(MessageType::kReadBlocks, true, 3, "after");
  for (size_t chunk : {size_t{1000}, size_t{65536}, stream.size()}) {
    SCOPED_TRACE("receives of " + std::to_string(chunk) + " bytes");
    FrameDecoder decoder;
    std::vector<Frame> frames;
    size_t at = 0;
    Frame frame;
    std::string error;
    while (at < stream.size()) {
      size_t room = chunk;
      char* into = decoder.Room(&room);
      ASSERT_GT(room, 0u);
      ASSERT_LE(room, chunk);
      const size_t got = std::min(room, stream.size() - at);
      std::memcpy(into, stream.data() + at, got);
      decoder.Commit(got);
      at += got;
      FrameDecoder::Result result;
      while ((result = decoder.Next(&frame, &error)) == FrameDecoder::Result::kFrame) {
        frames.push_back(frame);
      }
      ASSERT_EQ(result, FrameDecoder::Result::kNeedMore) << error;
      if (frames.size() == 1 && at < stream.size()) {
        // Inside the large frame: it counts as buffered, and the room ends with its payload.
        EXPECT_EQ(decoder.buffered(), at - (kFrameHeaderSize + 5));
        EXPECT_LE(decoder.needed(), big.size());
      }
    }
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].payload, "small");
    EXPECT_EQ(frames[1].request_id, 2u);
    EXPECT_TRUE(frames[1].payload == big);
    EXPECT_EQ(frames[2].payload, "after");
    EXPECT_EQ(decoder.buffered(), 0u);
  }
}

// Feed takes a stream that holds a large frame and more after it in one piece.
TEST(NetProtocolTest, FeedSplitsALargeFrameFromTheFramesAfterIt) {
  const std::string big(FrameDecoder::kLargePayload * 2, 'L');
  const std::string head = EncodeFrame(MessageType::kWriteBlocks, false, 1, big);
  const std::string tail = EncodeFrame(MessageType::kFlush, false, 2, "t");
  FrameDecoder decoder;
  Frame frame;
  std::string error;
  decoder.Feed(head.data(), kFrameHeaderSize + 10);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kNeedMore);
  EXPECT_EQ(decoder.needed(), big.size() - 10);
  const std::string rest = head.substr(kFrameHeaderSize + 10) + tail;
  decoder.Feed(rest.data(), rest.size());
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_TRUE(frame.payload == big);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_EQ(frame.payload, "t");
  EXPECT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kNeedMore);
}

// The edges of the large-payload state: a header alone holds only itself; a payload one byte
// under the threshold goes through the buffer as before; a whole payload needs nothing more
// before Next; a bad header right after a large frame is still caught; after that, what is
// committed is dropped.
TEST(NetProtocolTest, LargePayloadEdges) {
  const std::string big(FrameDecoder::kLargePayload, 'b');
  const std::string just_under(FrameDecoder::kLargePayload - 1, 'u');
  const std::string large = EncodeFrame(MessageType::kWriteBlocks, false, 1, big);
  const std::string small = EncodeFrame(MessageType::kWriteBlocks, false, 2, just_under);
  FrameDecoder decoder;
  Frame frame;
  std::string error;
  decoder.Feed(large.data(), kFrameHeaderSize);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kNeedMore);
  EXPECT_EQ(decoder.buffered(), kFrameHeaderSize);
  EXPECT_EQ(decoder.needed(), big.size());
  decoder.Feed(large.data() + kFrameHeaderSize, big.size());
  EXPECT_EQ(decoder.needed(), 0u) << "whole: Next will return it";
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_TRUE(frame.payload == big);

  decoder.Feed(small.data(), small.size() - 1);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kNeedMore);
  EXPECT_EQ(decoder.buffered(), small.size() - 1);
  decoder.Feed(small.data() + small.size() - 1, 1);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_TRUE(frame.payload == just_under);

  std::string bad = large;
  bad[0] = 'X';
  decoder.Feed(large.data(), large.size());
  decoder.Feed(bad.data(), kFrameHeaderSize);
  ASSERT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kFrame) << error;
  EXPECT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kMalformed);
  EXPECT_NE(error.find("bad magic"), std::string::npos) << error;
  size_t room = 100;
  decoder.Room(&room);
  decoder.Commit(room);
  EXPECT_EQ(decoder.buffered(), 0u);
  EXPECT_EQ(decoder.Next(&frame, &error), FrameDecoder::Result::kMalformed);
}

}  // namespace
}  // namespace net
}  // namespace stagio
