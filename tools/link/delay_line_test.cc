// The relay's delay model: the departure and arrival time of every chunk, computed from made-up
// read times, and the order in which they come out. No clock, no sockets.
#include "delay_line.h"

#include <gtest/gtest.h>

namespace stagio::link {
namespace {

constexpr int64_t kMs = 1000000;  // ns

TEST(DelayLine, AChunkArrivesAfterItsTransferAndTheLatency) {
  DelayLine line(1, 100);  // 100 MB/s: 100 KB take 1 ms
  const Chunk& chunk = line.Send(10 * kMs, 7, std::string(100000, 'x'));
  EXPECT_EQ(chunk.depart_ns, 10 * kMs);
  EXPECT_EQ(chunk.arrive_ns, 12 * kMs);
  EXPECT_EQ(line.NextArrivalNs(), 12 * kMs);
}

TEST(DelayLine, ConnectionsShareTheWire) {
  DelayLine line(1, 100);
  line.Send(0, 1, std::string(100000, 'a'));                    // wire 0-1 ms
  const Chunk& other = line.Send(0, 2, std::string(200000, 'b'));  // waits: wire 1-3 ms
  EXPECT_EQ(other.depart_ns, 1 * kMs);
  EXPECT_EQ(other.arrive_ns, 4 * kMs);
  EXPECT_EQ(line.BusyNs(), 3 * kMs);
}

TEST(DelayLine, AnIdleWireDoesNotDelayALaterChunk) {
  DelayLine line(2, 100);
  line.Send(0, 1, std::string(100000, 'a'));
  EXPECT_EQ(line.Send(50 * kMs, 1, "z").depart_ns, 50 * kMs);
}

TEST(DelayLine, ChunksComeOutOnlyOnceArrivedAndInOrder) {
  DelayLine line(1, 100);
  line.Send(0, 1, std::string(100000, 'a'));  // arrives at 2 ms
  line.Send(0, 2, std::string(100000, 'b'));  // at 3 ms
  line.Send(0, 1, "c");                        // at 3.00001 ms
  Chunk chunk;
  EXPECT_FALSE(line.PopArrived(2 * kMs - 1, &chunk));
  ASSERT_TRUE(line.PopArrived(3 * kMs, &chunk));
  EXPECT_EQ(chunk.connection, 1u);
  EXPECT_EQ(chunk.data, std::string(100000, 'a'));
  ASSERT_TRUE(line.PopArrived(3 * kMs, &chunk));
  EXPECT_EQ(chunk.connection, 2u);
  EXPECT_FALSE(line.PopArrived(3 * kMs, &chunk));
  ASSERT_TRUE(line.PopArrived(4 * kMs, &chunk));
  EXPECT_EQ(chunk.data, "c");
  EXPECT_TRUE(line.Empty());
}

TEST(DelayLine, TheEndOfStreamFollowsTheLastDataAndTakesNoWireTime) {
  DelayLine line(1, 100);
  line.Send(0, 4, std::string(100000, 'a'));
  const Chunk& end = line.SendEndOfStream(0, 4);
  EXPECT_TRUE(end.end_of_stream);
  EXPECT_EQ(end.depart_ns, 1 * kMs);
  EXPECT_EQ(end.arrive_ns, 2 * kMs);
  EXPECT_EQ(line.BusyNs(), 1 * kMs);
}

TEST(DelayLine, UnlimitedBandwidthPaysTheLatencyAlone) {
  DelayLine line(0.5, 0);
  EXPECT_EQ(line.Send(kMs, 1, std::string(1 << 20, 'q')).arrive_ns, kMs + kMs / 2);
}

}  // namespace
}  // namespace stagio::link
