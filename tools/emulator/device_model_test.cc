// The device model, driven with made-up arrival times: every finish time is exact.
#include "device_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace stagio::emu {
namespace {

constexpr int64_t kMs = 1000000;  // ns

DeviceState Device(double latency_ms, double bandwidth_mbps, int parallel) {
  DeviceParams params;
  params.latency_ms = latency_ms;
  params.bandwidth_mbps = bandwidth_mbps;
  params.parallel = parallel;
  EXPECT_EQ(DeviceParamsError(params), nullptr);
  return MakeDeviceState(params);
}

TEST(DeviceModel, DefaultsAreFiveMsTwoHundredMBsEightServers) {
  const DeviceParams defaults;
  EXPECT_EQ(DeviceParamsError(defaults), nullptr);
  const DeviceState device = MakeDeviceState(defaults);
  EXPECT_EQ(device.latency_ns, 5 * kMs);
  EXPECT_EQ(device.bandwidth_bytes_per_s, 200000000);
  EXPECT_EQ(device.parallel, 8);
}

TEST(DeviceModel, OneRequestTakesLatencyPlusBytesOverBandwidth) {
  DeviceState device = Device(5, 200, 8);
  // 1 MB at 200 MB/s is 5 ms.
  EXPECT_EQ(ChargeRequest(&device, 1000 * kMs, 1000000), 1000 * kMs + 5 * kMs + 5 * kMs);
}

TEST(DeviceModel, TransferTimeRoundsUpToWholeNanoseconds) {
  const DeviceState device = Device(1, 3, 1);  // 3e6 bytes/s: 333.33 ns per byte
  EXPECT_EQ(TransferNs(device, 0), 0);
  EXPECT_EQ(TransferNs(device, 1), 334);
  EXPECT_EQ(TransferNs(device, 3), 1000);
  EXPECT_EQ(TransferNs(device, 4096), 1365334);  // 1365333.33...
}

TEST(DeviceModel, ParametersRoundToWholeNanosecondsAndBytesPerSecond) {
  const DeviceState device = Device(1.5, 0.5, 1);
  EXPECT_EQ(device.latency_ns, 1500000);
  EXPECT_EQ(device.bandwidth_bytes_per_s, 500000);
  EXPECT_EQ(Device(0.0000004, 1, 1).latency_ns, 0);
}

TEST(DeviceModel, SimultaneousRequestsShareTheBandwidth) {
  DeviceState device = Device(5, 200, 8);
  // Both overlap their latency on two servers, then transfer one after the other.
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 10 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 15 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 0, 2000000), 25 * kMs);
}

TEST(DeviceModel, SequentialRequestsEachPayTheFullCost) {
  DeviceState device = Device(5, 200, 1);
  int64_t now = 7;
  for (int i = 0; i < 5; ++i) {
    const int64_t finish = ChargeRequest(&device, now, 400000);  // 2 ms of transfer
    EXPECT_EQ(finish, now + 7 * kMs);
    now = finish;
  }
}

TEST(DeviceModel, MoreRequestsThanServersQueueForAServer) {
  DeviceState device = Device(5, 200, 2);
  // Latency only: the third waits for the first free server.
  EXPECT_EQ(ChargeRequest(&device, 0, 0), 5 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 0, 0), 5 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 0, 0), 10 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 1 * kMs, 0), 10 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 1 * kMs, 0), 15 * kMs);
}

TEST(DeviceModel, QueuedRequestsAlsoQueueForTheChannel) {
  DeviceState device = Device(5, 200, 2);
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 10 * kMs);  // server 0
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 15 * kMs);  // server 1, waits for the channel
  // Server 0 frees first (10 ms): latency to 15 ms, the channel is free at 15 ms.
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 20 * kMs);
  // Server 1 (15 ms): latency to 20 ms, channel free at 20 ms.
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 25 * kMs);
}

TEST(DeviceModel, AZeroByteRequestCostsOnlyTheLatency) {
  DeviceState device = Device(5, 200, 8);
  EXPECT_EQ(ChargeRequest(&device, 100, 0), 100 + 5 * kMs);
  // Even while another request holds the channel: a sync moves no data.
  EXPECT_EQ(ChargeRequest(&device, 0, 10000000), 55 * kMs);  // 50 ms transfer
  EXPECT_EQ(ChargeRequest(&device, 1 * kMs, 0), 6 * kMs);
  EXPECT_EQ(device.channel_free_ns, 55 * kMs);
}

TEST(DeviceModel, SeeksNeverOverlapEvenOnSeparateServers) {
  DeviceParams params;
  params.latency_ms = 5;
  params.bandwidth_mbps = 200;
  params.parallel = 8;
  params.seek_ms = 2;
  ASSERT_EQ(DeviceParamsError(params), nullptr);
  DeviceState device = MakeDeviceState(params);
  EXPECT_EQ(device.seek_ns, 2 * kMs);
  // Latency overlaps on two servers; each request then seeks and transfers on the channel.
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 5 * kMs + 2 * kMs + 5 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 12 * kMs + 2 * kMs + 5 * kMs);
  // So many small requests cost a seek each, where one large one costs one.
  EXPECT_EQ(ChargeRequest(&device, 100 * kMs, 1000), 100 * kMs + 7 * kMs + 5000);
  // A request without bytes (a sync) does not seek.
  EXPECT_EQ(ChargeRequest(&device, 200 * kMs, 0), 205 * kMs);
  params.seek_ms = -1;
  EXPECT_NE(DeviceParamsError(params), nullptr);
}

TEST(DeviceModel, AnIdleDeviceForgetsItsPast) {
  DeviceState device = Device(5, 200, 1);
  EXPECT_EQ(ChargeRequest(&device, 0, 1000000), 10 * kMs);
  EXPECT_EQ(ChargeRequest(&device, 500 * kMs, 1000000), 510 * kMs);
}

TEST(DeviceModel, ZeroLatencyIsPureBandwidth) {
  DeviceState device = Device(0, 1000, 4);
  EXPECT_EQ(ChargeRequest(&device, 0, 1000), 1000);
  EXPECT_EQ(ChargeRequest(&device, 0, 1000), 2000);
}

TEST(DeviceModel, HugeRequestsDoNotOverflow) {
  DeviceState device = Device(1000000, 0.000001, 1);  // 1000 s, 1 byte/s
  const int64_t finish =
      ChargeRequest(&device, 0, std::numeric_limits<uint64_t>::max());
  EXPECT_GT(finish, 0);
  EXPECT_GT(ChargeRequest(&device, finish, 1 << 30), finish);
}

TEST(DeviceModel, RejectsParametersOutOfRange) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  auto error = [](double latency, double bandwidth, int parallel) {
    DeviceParams params;
    params.latency_ms = latency;
    params.bandwidth_mbps = bandwidth;
    params.parallel = parallel;
    return DeviceParamsError(params);
  };
  EXPECT_EQ(error(0, 200, 8), nullptr);
  EXPECT_EQ(error(1000000, 1e9, 64), nullptr);
  EXPECT_EQ(error(5, 0.000001, 1), nullptr);
  EXPECT_NE(error(-1, 200, 8), nullptr);
  EXPECT_NE(error(nan, 200, 8), nullptr);
  EXPECT_NE(error(inf, 200, 8), nullptr);
  EXPECT_NE(error(1000001, 200, 8), nullptr);
  EXPECT_NE(error(5, 0, 8), nullptr);
  EXPECT_NE(error(5, -200, 8), nullptr);
  EXPECT_NE(error(5, nan, 8), nullptr);
  EXPECT_NE(error(5, inf, 8), nullptr);
  EXPECT_NE(error(5, 1e-7, 8), nullptr);
  EXPECT_NE(error(5, 200, 0), nullptr);
  EXPECT_NE(error(5, 200, -3), nullptr);
  EXPECT_NE(error(5, 200, kMaxParallelServers + 1), nullptr);
  EXPECT_STREQ(error(5, 200, 65), "parallel servers must be a whole number from 1 to 64");
}

}  // namespace
}  // namespace stagio::emu
