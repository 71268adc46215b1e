// The daemon through its protocol, in-process: tokens, the cache shared by connections, short
// reads at the end of file, flush and close, prefetching by aggregator (seed 004 V-D),
// invalidation after storage changed behind it, pipelining, and graceful shutdown.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/driver.h"
#include "support/iond_fixture.h"

namespace stagio {
namespace iond {
namespace {

using namespace iond_test;  // the fixture's words: Client, ServerFixture, ReadFile, ...
using net::FileAccess;

constexpr uint64_t kBlock = 4096;  // the fixture's daemon block size

// Write-back only when the cache is full of dirty data: written bytes stay in the cache until a
// flush, so the tests can tell the cache from storage.
void KeepDirtyData(IondConfig* config) {
  config->write_back_high = 100;
  config->write_back_low = 100;
}

std::string Canonical(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? resolved : path;
}

std::string Bytes(size_t size, char seed) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(seed + i * 7 % 251);
  return bytes;
}

// ---- Tokens.

TEST(IondServerTest, ReachableListenerWithoutTokenDoesNotStart) {
  ServerFixture fixture([](IondConfig* config) {
    net::Address open;
    ASSERT_OK(net::Address::Parse("0.0.0.0:0", &open));
    config->listen.push_back(open);
  });
  const Status status = fixture.Start();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("0.0.0.0:0 can be reached from other machines"),
            std::string::npos)
      << status.message();
}

TEST(IondServerTest, TokenIsRequiredWhenSet) {
  ServerFixture fixture([](IondConfig* config) {
    config->token = "right token";
    net::Address open;
    ASSERT_OK(net::Address::Parse("0.0.0.0:0", &open));
    config->listen.push_back(open);  // allowed now: there is a token
  });
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("f", "abc");
  Client client;
  Status status = Client::Connect(fixture.address(), "wrong", &client);
  EXPECT_NE(status.message().find("wrong token"), std::string::npos) << status.message();
  status = Client::Connect(fixture.address(), "", &client);
  EXPECT_NE(status.message().find("wrong token (none given)"), std::string::npos)
      << status.message();
  // The TCP listener too.
  status = Client::Connect(fixture.server().bound_addresses().at(1), "right toke", &client);
  EXPECT_NE(status.message().find("wrong token"), std::string::npos) << status.message();

  // A refused Hello is answered, then the connection is closed: later frames are not served.
  RawSocket raw;
  ASSERT_OK(raw.Connect(fixture.address()));
  ASSERT_OK(raw.Send(iond_test::HelloFrame("wrong") +
                     net::EncodeFrame(net::MessageType::kStat, false, 2,
                                      net::EncodePayload(net::FileRequest()))));
  std::string received;
  ASSERT_TRUE(raw.ReceiveUntilClosed(&received));
  net::FrameDecoder decoder;
  decoder.Feed(received.data(), received.size());
  net::Frame frame;
  std::string error;
  ASSERT_EQ(decoder.Next(&frame, &error), net::FrameDecoder::Result::kFrame);
  EXPECT_EQ(frame.type, net::MessageType::kHello);
  net::HelloReply reply;
  ASSERT_OK(net::DecodePayload(frame.payload, &reply, "Hello"));
  EXPECT_EQ(reply.status.message, "wrong token");
  EXPECT_EQ(decoder.Next(&frame, &error), net::FrameDecoder::Result::kNeedMore)
      << "nothing after the refusal";

  EXPECT_EQ(fixture.server().stats().refused(), 4u);
  EXPECT_EQ(fixture.LogLinesWith("refused: wrong token"), 4u);

  ASSERT_OK(Client::Connect(fixture.address(), "right token", &client));
  EXPECT_EQ(client.connection().hello().server, "stagio-iond " STAGIO_VERSION_STRING);
  EXPECT_EQ(client.connection().hello().block_size, kBlock);
  uint64_t handle = 0;
  ASSERT_OK(client.Open(path, FileAccess::kReadOnly, &handle));
  std::string data;
  ASSERT_OK(client.Read(handle, 0, 10, &data));
  EXPECT_EQ(data, "abc");
}

// ---- The cache, through the protocol.

TEST(IondServerTest, WritesAreSeenByOtherConnectionsBeforeAnyFlush) {
  ServerFixture fixture(KeepDirtyData);
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("shared");
  const std::string bytes = Bytes(3 * kBlock + 100, 'a');  // crosses block boundaries
  Client writer;
  Client reader;
  uint64_t written = 0;
  uint64_t read = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kWriteOnly, &writer, &written));
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadOnly, &reader, &read));
  EXPECT_NE(written, read) << "every Open gets its own handle";
  ASSERT_OK(writer.Write(written, 50, bytes));

  std::string data;
  ASSERT_OK(reader.Read(read, 0, 4 * kBlock, &data));
  EXPECT_EQ(data, std::string(50, '\0') + bytes);
  uint64_t size = 0;
  ASSERT_OK(reader.Stat(read, &size));
  EXPECT_EQ(size, 50 + bytes.size());
  EXPECT_EQ(ReadFile(path), "") << "nothing reached storage before the flush";

  ASSERT_OK(reader.Flush(read));  // any handle of the file flushes it
  EXPECT_EQ(ReadFile(path), std::string(50, '\0') + bytes);
}

TEST(IondServerTest, ReadsAreShortAtTheEndOfTheFile) {
  ServerFixture fixture(KeepDirtyData);
  ASSERT_OK(fixture.Start());
  const std::string content = Bytes(5000, 'q');
  const std::string path = fixture.MakeFile("eof", content);
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client,
                                   &handle));
  std::string data;
  ASSERT_OK(client.Read(handle, 4000, 4096, &data));
  EXPECT_EQ(data, content.substr(4000));
  ASSERT_OK(client.Read(handle, 6000, 10, &data));
  EXPECT_EQ(data, "");
  // Bytes written past the end and not yet flushed count for the size.
  ASSERT_OK(client.Write(handle, 9000, "xyz"));
  ASSERT_OK(client.Read(handle, 8990, 4096, &data));
  EXPECT_EQ(data, std::string(10, '\0') + "xyz");
  uint64_t size = 0;
  ASSERT_OK(client.Stat(handle, &size));
  EXPECT_EQ(size, 9003u);
  // Another writer extends the file on storage: a read past the known size asks storage again.
  const std::string more = Bytes(2000, 'm');
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, more.data(), more.size(), 12000), static_cast<ssize_t>(more.size()));
  ::close(fd);
  ASSERT_OK(client.Read(handle, 13000, 4096, &data));
  EXPECT_EQ(data, more.substr(1000));
}

TEST(IondServerTest, ErrorsAnswerTheRequestAndKeepTheConnection) {
  ServerFixture fixture(KeepDirtyData);
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("f", "abc");
  Client client;
  ASSERT_OK(Client::Connect(fixture.address(), "", &client));
  Status status = client.Flush(12345);
  EXPECT_NE(status.message().find("unknown file handle 12345"), std::string::npos)
      << status.message();
  uint64_t handle = 0;
  ASSERT_OK(client.Open(path, FileAccess::kReadOnly, &handle));
  status = client.Write(handle, 0, "no");
  EXPECT_NE(status.message().find("opened read-only"), std::string::npos) << status.message();
  std::string data;
  status = client.Read(handle, 0, net::kMaxDataPerRequest + 1, &data);
  EXPECT_NE(status.message().find("exceeds the limit"), std::string::npos) << status.message();
  status = client.Read(handle, UINT64_MAX - 1, 10, &data);
  EXPECT_NE(status.message().find("largest file offset"), std::string::npos) << status.message();
  ASSERT_OK(client.Close(handle));
  status = client.Close(handle);
  EXPECT_NE(status.message().find("unknown file handle"), std::string::npos) << status.message();
  // A handle is valid only on the connection that opened it.
  Client other;
  ASSERT_OK(Client::Connect(fixture.address(), "", &other));
  ASSERT_OK(client.Open(path, FileAccess::kReadOnly, &handle));
  EXPECT_FALSE(other.Read(handle, 0, 3, &data).ok());
  ASSERT_OK(client.Read(handle, 0, 3, &data));
  EXPECT_EQ(data, "abc");
  EXPECT_EQ(fixture.server().stats().dropped(), 0u);
}

TEST(IondServerTest, PipelinedRequestsAreAllAnswered) {
  ServerFixture fixture(KeepDirtyData);
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("pipe");
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client,
                                   &handle));
  constexpr int kRequests = 200;  // more than the in-flight bound of a connection
  std::vector<std::shared_ptr<net::ClientConnection::Pending>> pending;
  for (int i = 0; i < kRequests; ++i) {
    net::WriteRequest request;
    request.handle = handle;
    request.offset = static_cast<uint64_t>(i) * 100;
    request.data = Bytes(100, static_cast<char>(i));
    pending.push_back(client.connection().Start(net::MessageType::kWriteBlocks,
                                                net::EncodePayload(request)));
  }
  for (auto& request : pending) {
    net::StatusReply reply;
    ASSERT_OK(client.connection().FinishTyped<net::MessageType::kWriteBlocks>(request, &reply));
  }
  pending.clear();
  for (int i = 0; i < kRequests; ++i) {
    net::ReadRequest request;
    request.handle = handle;
    request.offset = static_cast<uint64_t>(i) * 100;
    request.length = 100;
    pending.push_back(client.connection().Start(net::MessageType::kReadBlocks,
                                                net::EncodePayload(request)));
  }
  for (int i = 0; i < kRequests; ++i) {
    net::ReadReply reply;
    ASSERT_OK(client.connection().FinishTyped<net::MessageType::kReadBlocks>(pending[i], &reply));
    ASSERT_EQ(reply.data, Bytes(100, static_cast<char>(i))) << "request " << i;
  }
  // The reader stops taking requests off the socket at the connection's bound.
  EXPECT_LE(fixture.server().stats().peak_in_flight(), kMaxRequestsInFlight);
  EXPECT_GE(fixture.server().stats().peak_in_flight(), 1u);
  EXPECT_LE(fixture.server().stats().peak_in_flight_bytes(), kMaxBytesInFlight);
}

TEST(IondServerTest, CloseFlushesAndTheLastCloseForgetsTheFile) {
  ServerFixture fixture(KeepDirtyData);
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("closing");
  const std::string canonical = Canonical(path);
  Client a;
  Client b;
  uint64_t handle_a = 0;
  uint64_t handle_b = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &a, &handle_a));
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &b, &handle_b));
  ASSERT_OK(a.Write(handle_a, 0, "first"));
  ASSERT_OK(a.Close(handle_a));
  EXPECT_EQ(ReadFile(path), "first");
  EXPECT_NE(fixture.server().files().files().Find(canonical), nullptr) << "b still has it open";

  // b's connection ends without closing its handle: the daemon closes it, flushing.
  ASSERT_OK(b.Write(handle_b, 5, "+second"));
  b = Client();
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return fixture.server().files().files().Find(canonical) == nullptr; }));
  EXPECT_EQ(ReadFile(path), "first+second");
  EXPECT_EQ(fixture.server().stats().dropped(), 0u) << "hanging up is not an error";
}

TEST(IondServerTest, PrefetchesTheNextBlocksOfTheSameAggregator) {
  ServerFixture fixture([](IondConfig* config) { config->prefetch_blocks = 3; });
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("striped", Bytes(64 * kBlock, 's'));
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadOnly, &client,
                                   &handle));
  // Aggregator 1 of 4 reads its client block 5 (client blocks = daemon blocks here).
  std::string data;
  ASSERT_OK(client.Read(handle, 5 * kBlock, kBlock, &data, kBlock, 4));
  ASSERT_EQ(data, Bytes(64 * kBlock, 's').substr(5 * kBlock, kBlock));
  FileService& files = fixture.server().files();
  files.io_thread().WaitIdle();
  const auto file = files.files().Find(Canonical(path));
  ASSERT_NE(file, nullptr);
  // A new file's depth is two client blocks (of at most 3).
  for (uint64_t block : {9, 13}) {
    EXPECT_TRUE(files.cache().Contains(file->id(), block)) << block;
  }
  for (uint64_t block : {4, 6, 8, 10, 17, 21}) {
    EXPECT_FALSE(files.cache().Contains(file->id(), block)) << block;
  }
  EXPECT_EQ(file->stats()->Get(Counter::prefetch_issued), 2u);
  // The aggregator's next read finds its block prefetched, and the depth grows to 3: 13 is
  // there, 17 and 21 are fetched.
  ASSERT_OK(client.Read(handle, 9 * kBlock, kBlock, &data, kBlock, 4));
  EXPECT_EQ(file->stats()->Get(Counter::prefetch_used), 1u);
  files.io_thread().WaitIdle();
  EXPECT_TRUE(files.cache().Contains(file->id(), 17));
  EXPECT_TRUE(files.cache().Contains(file->id(), 21));
  EXPECT_FALSE(files.cache().Contains(file->id(), 25));
  const nlohmann::json stats = fixture.server().StatsJson();
  EXPECT_EQ(stats["cache"]["prefetch_issued"], 4u);
  EXPECT_EQ(stats["requests"]["ReadBlocks"], 2u);
  EXPECT_EQ(stats["bytes_read"], 2 * kBlock);
}

TEST(IondServerTest, OnlyTheLastPieceOfAClientReadPrefetches) {
  ServerFixture fixture([](IondConfig* config) { config->prefetch_blocks = 2; });
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("pieces", Bytes(64 * kBlock, 'p'));
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadOnly, &client, &handle));
  FileService& files = fixture.server().files();
  std::string data;
  // A client read of blocks 0-3 in two pieces: the first says one more follows, and
  // prefetches nothing, not even the blocks of the piece after it.
  ASSERT_OK(client.Read(handle, 0, 2 * kBlock, &data, kBlock, 1, /*pieces_after=*/1));
  files.io_thread().WaitIdle();
  const auto file = files.files().Find(Canonical(path));
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->stats()->Get(Counter::prefetch_issued), 0u);
  EXPECT_FALSE(files.cache().Contains(file->id(), 2));
  // The last piece prefetches what follows the whole read.
  ASSERT_OK(client.Read(handle, 2 * kBlock, 2 * kBlock, &data, kBlock, 1, /*pieces_after=*/0));
  files.io_thread().WaitIdle();
  EXPECT_EQ(file->stats()->Get(Counter::prefetch_issued), 2u);
  EXPECT_TRUE(files.cache().Contains(file->id(), 4));
  EXPECT_TRUE(files.cache().Contains(file->id(), 5));
}

// A write that storage would refuse (past the largest file its file system holds) fails when
// it is made, as without the daemon, and nothing is left to fail at write-back.
TEST(IondServerTest, WritePastTheFileSystemsLargestFileFailsAtOnce) {
  ServerFixture fixture;
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("huge");
  std::unique_ptr<DriverFile> probe;
  ASSERT_OK(PosixDriver()->Open(path, OpenAccess::kReadOnly, &probe));
  const std::optional<uint64_t> largest = probe->LargestSize();
  if (!largest || *largest > (uint64_t{1} << 62)) GTEST_SKIP() << "no file size limit here";
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client, &handle));
  const Status refused = client.Write(handle, *largest - 1, "xy");
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("File too large"), std::string::npos) << refused.message();
  ASSERT_OK(client.Write(handle, 0, "fits"));
  ASSERT_OK(client.Close(handle));
  ASSERT_OK(fixture.Stop());  // no write-back error is left
  EXPECT_EQ(ReadFile(path), "fits");
}

TEST(IondServerTest, InvalidateShowsWhatWasWrittenBehindTheDaemon) {
  ServerFixture fixture([](IondConfig* config) { config->prefetch_blocks = 0; });
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("behind", std::string(2 * kBlock, 'o'));
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client,
                                   &handle));
  std::string data;
  ASSERT_OK(client.Read(handle, 0, 10, &data));
  EXPECT_EQ(data, std::string(10, 'o'));
  // A client writes storage directly (a PMPI write) and shrinks the file.
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "NEW", 3, 2), 3);
  ASSERT_EQ(::ftruncate(fd, kBlock), 0);
  ::close(fd);
  ASSERT_OK(client.Read(handle, 0, 10, &data));
  EXPECT_EQ(data, std::string(10, 'o')) << "cached bytes until the client invalidates";
  ASSERT_OK(client.Invalidate(handle));
  ASSERT_OK(client.Read(handle, 0, 10, &data));
  EXPECT_EQ(data, "ooNEWooooo");
  uint64_t size = 0;
  ASSERT_OK(client.Stat(handle, &size));
  EXPECT_EQ(size, kBlock);
  ASSERT_OK(client.Read(handle, kBlock - 2, 10, &data));
  EXPECT_EQ(data, "oo");
}

TEST(IondServerTest, SyncWritesAndDropsCleanBlocks) {
  ServerFixture fixture(KeepDirtyData);
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("synced", std::string(100, '.'));
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client,
                                   &handle));
  ASSERT_OK(client.Write(handle, 0, "abc"));
  ASSERT_OK(client.Sync(handle));
  EXPECT_EQ(ReadFile(path), "abc" + std::string(97, '.'));
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "Z", 1, 50), 1);
  ::close(fd);
  std::string data;
  ASSERT_OK(client.Read(handle, 48, 4, &data));
  EXPECT_EQ(data, "..Z.") << "the sync dropped the cached block";
}

// ---- Shutdown.

TEST(IondServerTest, StopFlushesDirtyDataOfOpenFiles) {
  ServerFixture fixture(KeepDirtyData);
  ASSERT_OK(fixture.Start());
  const std::string kept_open = fixture.MakeFile("open");
  const std::string bytes = Bytes(2 * kBlock + 7, 'd');
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(kept_open, FileAccess::kReadWrite, &client,
                                   &handle));
  ASSERT_OK(client.Write(handle, 0, bytes));
  EXPECT_EQ(ReadFile(kept_open), "");
  EXPECT_GT(fixture.server().files().cache().dirty_bytes(), 0u);

  ASSERT_OK(fixture.Stop());
  EXPECT_EQ(ReadFile(kept_open), bytes);
  EXPECT_FALSE(client.Flush(handle).ok()) << "the daemon closed the connection";
  const nlohmann::json stats = fixture.server().StatsJson();
  EXPECT_EQ(stats["requests"]["WriteBlocks"], 1u);
  EXPECT_EQ(stats["bytes_written"], bytes.size());
  EXPECT_EQ(stats["cache"]["dirty_bytes_flushed"], bytes.size());
  EXPECT_EQ(stats["cache"]["dirty_bytes"], 0u);
}

TEST(IondServerTest, ContinuousWriteBackEmptiesTheCacheWithoutAFlush) {
  ServerFixture fixture;  // the default: high and low water marks 0%
  ASSERT_OK(fixture.Start());
  const std::string path = fixture.MakeFile("continuous");
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client,
                                   &handle));
  ASSERT_OK(client.Write(handle, 0, "background"));
  fixture.server().files().io_thread().WaitIdle();
  EXPECT_EQ(fixture.server().files().cache().dirty_bytes(), 0u);
  EXPECT_EQ(ReadFile(path), "background");
}

}  // namespace
}  // namespace iond
}  // namespace stagio
