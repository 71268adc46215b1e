// The daemon against hostile bytes: many connections send random bytes, mutations of valid
// request streams, truncated frames and half-closed streams (fixed seeds). Each bad stream
// must cost only its own connection: afterwards an ordinary client opens, writes, reads back
// and flushes a file, and the bytes on disk are right.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/iond_fixture.h"

namespace stagio {
namespace iond {
namespace {

using namespace iond_test;  // the fixture's words: Client, ServerFixture, ReadFile, ...
using net::MessageType;

constexpr uint64_t kBlock = 4096;

template <MessageType kType>
std::string Request(uint64_t id, const typename net::MessageTypes<kType>::Request& request) {
  return net::EncodeFrame(kType, false, id, net::EncodePayload(request));
}

// The frames the daemon sent back, in order; stops at the first malformed one.
std::vector<net::Frame> Frames(const std::string& bytes) {
  net::FrameDecoder decoder;
  decoder.Feed(bytes.data(), bytes.size());
  std::vector<net::Frame> frames;
  net::Frame frame;
  std::string error;
  while (decoder.Next(&frame, &error) == net::FrameDecoder::Result::kFrame) frames.push_back(frame);
  return frames;
}

// A valid stream of requests on file `handle`: writes, reads, stat, flush and so on.
std::string ValidRequests(uint64_t handle, std::mt19937& random) {
  std::string stream;
  for (uint64_t id = 10; id < 10 + 1 + random() % 8; ++id) {
    const uint64_t offset = random() % (8 * kBlock);
    switch (random() % 5) {
      case 0: {
        net::WriteRequest write;
        write.handle = handle;
        write.offset = offset;
        write.data = std::string(1 + random() % 3000, static_cast<char>(random()));
        stream += Request<MessageType::kWriteBlocks>(id, write);
        break;
      }
      case 1: {
        net::ReadRequest read;
        read.handle = handle;
        read.offset = offset;
        read.length = random() % 10000;
        read.client_block_size = kBlock << (random() % 3);
        read.client_aggregators = random() % 5;
        stream += Request<MessageType::kReadBlocks>(id, read);
        break;
      }
      default: {
        net::FileRequest file;
        file.handle = handle;
        const MessageType types[] = {MessageType::kStat, MessageType::kFlush,
                                     MessageType::kInvalidate, MessageType::kSync};
        stream += net::EncodeFrame(types[random() % 4], false, id, net::EncodePayload(file));
      }
    }
  }
  return stream;
}

void Mutate(std::string* bytes, std::mt19937& random) {
  if (bytes->empty()) return;
  const int edits = 1 + random() % 4;
  for (int i = 0; i < edits && !bytes->empty(); ++i) {
    const size_t at = random() % bytes->size();
    switch (random() % 4) {
      case 0: (*bytes)[at] = static_cast<char>(random()); break;                     // flip
      case 1: bytes->insert(at, 1 + random() % 8, static_cast<char>(random())); break;  // insert
      case 2: bytes->erase(at, 1 + random() % 8); break;                              // delete
      case 3: bytes->resize(at); break;                                               // truncate
    }
  }
}

// One hostile connection: random bytes (sometimes after a valid Hello), or a real Hello and Open
// followed by requests on that handle, mutated, truncated or intact; then a half-close. Returns
// once the daemon has closed the stream.
void RunCase(const net::Address& address, const std::string& path, uint32_t seed) {
  std::mt19937 random(seed);
  RawSocket socket;
  ASSERT_OK(socket.Connect(address));
  std::string tail;
  const int kind = static_cast<int>(random() % 4);
  if (kind == 0) {  // random bytes, sometimes after a valid Hello
    if (random() % 2) tail = iond_test::HelloFrame("");
    const size_t length = random() % 200;
    for (size_t i = 0; i < length; ++i) tail.push_back(static_cast<char>(random()));
  } else {
    // A real session first, so that mutations reach the request decoder and the handlers.
    ASSERT_OK(socket.Send(iond_test::HelloFrame("")));
    net::OpenRequest open;
    open.path = path;
    open.access = static_cast<uint8_t>(net::FileAccess::kReadWrite);
    ASSERT_OK(socket.Send(Request<MessageType::kOpen>(2, open)));
    std::vector<net::Frame> replies;
    ASSERT_TRUE(socket.ReceiveFrames(2, &replies));
    net::OpenReply opened;
    ASSERT_OK(net::DecodePayload(replies[1].payload, &opened, "Open"));
    ASSERT_EQ(opened.status.code, 0) << opened.status.message;
    const uint64_t handle = opened.handle;
    tail = ValidRequests(handle, random);
    if (kind == 1) Mutate(&tail, random);                           // mutated valid frames
    if (kind == 2) tail.resize(random() % (tail.size() + 1));       // truncated frames
    // kind 3: valid requests, then the half-close alone
  }
  socket.Send(tail);  // the daemon may already have closed: that is one correct outcome
  socket.CloseWriting();
  std::string received;
  ASSERT_TRUE(socket.ReceiveUntilClosed(&received)) << "the daemon did not close seed " << seed;
  for (const net::Frame& frame : Frames(received)) EXPECT_TRUE(frame.reply);
}

// An ordinary client still gets correct service.
void CheckHealthy(ServerFixture& fixture) {
  const std::string path = fixture.MakeFile("health");
  std::string bytes(3 * kBlock + 11, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 13 + 5);
  Client writer;
  Client reader;
  uint64_t write_handle = 0;
  uint64_t read_handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, net::FileAccess::kReadWrite, &writer, &write_handle));
  ASSERT_OK(fixture.ConnectAndOpen(path, net::FileAccess::kReadOnly, &reader, &read_handle));
  ASSERT_OK(writer.Write(write_handle, 0, bytes));
  std::string data;
  ASSERT_OK(reader.Read(read_handle, 0, static_cast<uint32_t>(bytes.size()) + 100, &data));
  EXPECT_EQ(data, bytes);
  ASSERT_OK(writer.Flush(write_handle));
  EXPECT_EQ(ReadFile(path), bytes);
  ASSERT_OK(writer.Close(write_handle));
  ASSERT_OK(reader.Close(read_handle));
}

TEST(IondFuzzTest, HostileStreamsLeaveTheDaemonAliveAndCorrect) {
  ServerFixture fixture;
  ASSERT_OK(fixture.Start());
  const std::string target = fixture.MakeFile("target", std::string(5 * kBlock, 't'));
  constexpr int kThreads = 4;
  constexpr int kCasesPerThread = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCasesPerThread; ++i) {
        RunCase(fixture.address(), target, static_cast<uint32_t>(t * 100000 + i));
        if (::testing::Test::HasFatalFailure()) return;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  CheckHealthy(fixture);
  ASSERT_OK(fixture.Stop());  // writes the counts of the log lines held back
  // Bad streams were seen and each was logged: by a line naming the client, or, before Hello
  // (where anyone can cause them as fast as they like), past the first few lines a minute, in
  // the count of a summary line.
  EXPECT_GT(fixture.server().stats().dropped(), 100u);
  uint64_t logged = fixture.LogLinesWith("closing the connection of client");
  for (const std::string& line : fixture.log()) {
    if (line.rfind("closed ", 0) == 0 &&
        line.find(" more connections that broke the protocol before Hello") != std::string::npos) {
      logged += std::stoull(line.substr(7));
    }
  }
  EXPECT_GE(logged, fixture.server().stats().dropped());
  EXPECT_GT(fixture.LogLinesWith("malformed"), 0u);
  EXPECT_GT(fixture.LogLinesWith("the stream ended inside a frame"), 0u);
}

// ---- Each protocol error, once, with its log line.

struct ProtocolError {
  const char* name;
  std::string stream;
  const char* logged;
};

TEST(IondFuzzTest, EachProtocolErrorClosesOnlyItsConnection) {
  ServerFixture fixture;
  ASSERT_OK(fixture.Start());
  Client bystander;  // connected throughout
  ASSERT_OK(Client::Connect(fixture.address(), "", &bystander));
  std::string oversized = net::EncodeFrame(MessageType::kWriteBlocks, false, 5, "");
  const uint32_t too_long = net::kDefaultMaxPayload + 1;
  for (int i = 0; i < 4; ++i) oversized[16 + i] = static_cast<char>((too_long >> (8 * i)) & 0xff);
  net::FileRequest stat;
  const std::vector<ProtocolError> errors = {
      {"no Hello first", Request<MessageType::kStat>(1, stat),
       "its first message is Stat, not Hello"},
      {"reply frame", iond_test::HelloFrame("") + net::EncodeFrame(MessageType::kStat, true, 2, ""),
       "it sent a reply frame (Stat)"},
      {"payload that does not decode", iond_test::HelloFrame("") +
           net::EncodeFrame(MessageType::kStat, false, 2, "abc"),
       "malformed payload: Stat: payload is truncated"},
      {"oversized, header only", iond_test::HelloFrame("") + oversized.substr(0, 24),
       "exceeds the limit"},
      {"bad magic", "HTTP/1.1 GET /\r\n\r\n.......", "bad magic"},
      {"truncated", iond_test::HelloFrame("").substr(0, 30), "the stream ended inside a frame"},
      {"bad Hello payload", net::EncodeFrame(MessageType::kHello, false, 1, "zz"),
       "malformed payload: Hello"},
  };
  for (const ProtocolError& error : errors) {
    SCOPED_TRACE(error.name);
    RawSocket socket;
    ASSERT_OK(socket.Connect(fixture.address()));
    socket.Send(error.stream);
    if (std::string(error.name) == "truncated") socket.CloseWriting();
    std::string received;
    // The oversized frame is refused without its payload: the daemon closes while the client
    // has sent only the header.
    ASSERT_TRUE(socket.ReceiveUntilClosed(&received));
    EXPECT_EQ(fixture.LogLinesWith(error.logged), 1u);
  }
  EXPECT_EQ(fixture.server().stats().dropped(), errors.size());
  std::string data;
  ASSERT_OK(OpenAndRead(bystander, fixture.MakeFile("still", "served"), 100, &data));
  EXPECT_EQ(data, "served");
}

TEST(IondFuzzTest, HalfClosedStreamStillGetsItsReplies) {
  ServerFixture fixture;
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("half", "0123456789");
  RawSocket socket;
  ASSERT_OK(socket.Connect(fixture.address()));
  net::OpenRequest open;
  open.path = path;
  ASSERT_OK(socket.Send(iond_test::HelloFrame("") + Request<MessageType::kOpen>(2, open)));
  socket.CloseWriting();
  std::string received;
  ASSERT_TRUE(socket.ReceiveUntilClosed(&received));
  const std::vector<net::Frame> frames = Frames(received);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[1].type, MessageType::kOpen);
  EXPECT_EQ(frames[1].request_id, 2u);
  net::OpenReply reply;
  ASSERT_OK(net::DecodePayload(frames[1].payload, &reply, "Open"));
  EXPECT_EQ(reply.status.code, 0) << reply.status.message;
  EXPECT_EQ(fixture.server().stats().dropped(), 0u);
}

}  // namespace
}  // namespace iond
}  // namespace stagio
