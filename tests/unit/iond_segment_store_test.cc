// The segment store inside the daemon, through its protocol: scattered reads grouped while
// the daemon is idle and served from segments to a client that opens the file again, writes
// through the daemon dropping the segments they touch, its counters in the stats, and a store
// that cannot be made leaving the daemon to serve from storage.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/iond_fixture.h"

namespace stagio {
namespace iond {
namespace {

using namespace iond_test;
using net::FileAccess;

constexpr uint64_t kBlock = 4096;  // the fixture's daemon block size
constexpr uint64_t kBlocks = 64;

std::string Content() {
  std::string bytes(kBlocks * kBlock, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 17 + i / 977) % 253);
  return bytes;
}

void WithSegmentStore(IondConfig* config, const std::string& location) {
  config->prefetch_blocks = 0;  // only what the client reads reaches storage
  config->segstore = location;
  config->segstore_size = 64 * kBlock;
  config->segstore_segment_size = 4 * kBlock;
  config->segstore_cache = 4 * kBlock;
  config->segstore_idle = 0.3;
}

// The blocks a "zoom" reads, far apart in the file.
const std::vector<uint64_t> kScattered = {40, 3, 27, 11, 58, 19, 33, 7};

// Opens the file, reads every block of `blocks` and compares it, and closes the file (the
// daemon's cache forgets it: the next open reads below the cache again).
void ReadPass(ServerFixture& fixture, const std::string& path, const std::string& content,
              const std::vector<uint64_t>& blocks) {
  Client client;
  uint64_t handle = 0;
  ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client, &handle));
  for (uint64_t block : blocks) {
    std::string data;
    ASSERT_OK(client.Read(handle, block * kBlock, kBlock, &data));
    ASSERT_EQ(data, content.substr(block * kBlock, kBlock)) << "block " << block;
  }
  ASSERT_OK(client.Close(handle));
}

nlohmann::json SegmentStats(ServerFixture& fixture) {
  return fixture.server().StatsJson().value("segment_store", nlohmann::json::object());
}

// Waits (for real: the daemon's idle clock) until `runs` grouping runs have finished.
bool WaitForGrouping(ServerFixture& fixture, uint64_t runs) {
  for (int i = 0; i < 1000; ++i) {
    if (SegmentStats(fixture).value("grouping_runs", uint64_t{0}) >= runs) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(IondSegmentStoreTest, ASecondPassIsServedFromSegments) {
  std::string location;
  ServerFixture fixture([&](IondConfig* config) {
    location = config->root + "/../segments";
    WithSegmentStore(config, location);
  });
  ASSERT_EQ(::mkdir(location.c_str(), 0700), 0);
  ASSERT_OK(fixture.Start());
  std::string content = Content();
  const std::string path = fixture.MakeFile("zoom", content);
  ReadPass(fixture, path, content, kScattered);
  ASSERT_TRUE(WaitForGrouping(fixture, 1));
  // Two segments of 4 blocks, unless a stall in the pass let a run group part of it first
  // (later runs then group the rest): the counts below are bounds for that reason.
  EXPECT_GE(SegmentStats(fixture)["segments_written"], 1u);

  ReadPass(fixture, path, content, kScattered);
  nlohmann::json stats = SegmentStats(fixture);
  EXPECT_GE(stats["read_hits"], 1u) << stats.dump();
  EXPECT_EQ(stats["bytes_from_segments"].get<uint64_t>(),
            stats["read_hits"].get<uint64_t>() * kBlock);
  const uint64_t held = stats["segments_held"];

  // A write through the daemon: the segment holding block 27 goes before the write is
  // acknowledged; a read of it afterwards has the new bytes (from the cache, then storage).
  {
    Client client;
    uint64_t handle = 0;
    ASSERT_OK(fixture.ConnectAndOpen(path, FileAccess::kReadWrite, &client, &handle));
    const std::string bytes(100, 'W');
    ASSERT_OK(client.Write(handle, 27 * kBlock + 5, bytes));
    content.replace(27 * kBlock + 5, bytes.size(), bytes);
    ASSERT_OK(client.Close(handle));
  }
  stats = SegmentStats(fixture);
  if (held == 2) {  // the whole pass was grouped: block 27's segment is one of the two
    EXPECT_EQ(stats["segments_held"], 1u) << stats.dump();
    EXPECT_GE(stats["invalidated_segments"], 1u) << stats.dump();
  }
  // Right bytes, the new ones included, whatever the store holds.
  ReadPass(fixture, path, content, kScattered);
  ASSERT_OK(fixture.Stop());
}

TEST(IondSegmentStoreTest, AStoreThatCannotBeMadeLeavesTheDaemonServing) {
  ServerFixture fixture([](IondConfig* config) {
    WithSegmentStore(config, config->root + "/../no-such-directory");
  });
  ASSERT_OK(fixture.Start());
  EXPECT_EQ(fixture.LogLinesWith("runs without its segment store"), 1u);
  EXPECT_FALSE(fixture.server().StatsJson().contains("segment_store"));
  const std::string content = Content();
  const std::string path = fixture.MakeFile("plain", content);
  ReadPass(fixture, path, content, kScattered);
  ReadPass(fixture, path, content, kScattered);
}

TEST(IondSegmentStoreTest, ASizeBelowOneSegmentIsSaidAndTheStoreStepsAside) {
  std::string location;
  ServerFixture fixture([&](IondConfig* config) {
    location = config->root + "/../segments";
    WithSegmentStore(config, location);
    config->segstore_size = config->segstore_segment_size - 1;
  });
  ASSERT_EQ(::mkdir(location.c_str(), 0700), 0);
  ASSERT_OK(fixture.Start());
  EXPECT_EQ(fixture.LogLinesWith("holds no segment"), 1u);
  const std::string content = Content();
  ReadPass(fixture, fixture.MakeFile("f", content), content, kScattered);
}

}  // namespace
}  // namespace iond
}  // namespace stagio
