// The wire model and the emulator's link stage, driven with made-up times: every departure,
// arrival and finish time is exact, so no test depends on a clock.
#include <gtest/gtest.h>

#include "device_model.h"
#include "emu_env.h"
#include "wire_model.h"

namespace stagio::emu {
namespace {

constexpr int64_t kMs = 1000000;  // ns

TEST(WireModel, AMessageDepartsAtOnceAndArrivesAfterItsBytesAndTheLatency) {
  WireState wire = MakeWireState(1, 100);  // 1 ms, 100 MB/s: 1 MB takes 10 ms
  const WireCrossing crossing = CrossWire(&wire, 50 * kMs, 1000000);
  EXPECT_EQ(crossing.depart_ns, 50 * kMs);
  EXPECT_EQ(crossing.arrive_ns, 50 * kMs + 10 * kMs + 1 * kMs);
  EXPECT_EQ(wire.free_ns, 60 * kMs);
}

TEST(WireModel, BackToBackMessagesQueueForTheWireAndPipelineTheLatency) {
  WireState wire = MakeWireState(1, 100);
  CrossWire(&wire, 0, 1000000);                            // on the wire 0-10 ms
  const WireCrossing second = CrossWire(&wire, 2 * kMs, 500000);  // waits, then 5 ms
  EXPECT_EQ(second.depart_ns, 10 * kMs);
  EXPECT_EQ(second.arrive_ns, 15 * kMs + 1 * kMs);  // only one latency after the wire
}

TEST(WireModel, AnEmptyMessageWaitsForTheWireButTakesNoWireTime) {
  WireState wire = MakeWireState(2, 100);
  CrossWire(&wire, 0, 1000000);
  const WireCrossing ack = CrossWire(&wire, 1 * kMs, 0);
  EXPECT_EQ(ack.depart_ns, 10 * kMs);
  EXPECT_EQ(ack.arrive_ns, 12 * kMs);
  EXPECT_EQ(wire.free_ns, 10 * kMs);
}

TEST(WireModel, AnIdleWireLetsAMessageGoWhenItIsReady) {
  WireState wire = MakeWireState(1, 100);
  CrossWire(&wire, 0, 100000);  // free again at 1 ms
  EXPECT_EQ(CrossWire(&wire, 7 * kMs, 0).depart_ns, 7 * kMs);
}

TEST(WireModel, BandwidthZeroIsUnlimited) {
  WireState wire = MakeWireState(3, 0);
  EXPECT_EQ(WireTransferNs(wire, 1u << 30), 0);
  EXPECT_EQ(CrossWire(&wire, 5 * kMs, 1u << 30).arrive_ns, 8 * kMs);
}

TEST(WireModel, TransferTimeRoundsUpLikeTheDevice) {
  const WireState wire = MakeWireState(0, 3);  // 333.33 ns per byte
  EXPECT_EQ(WireTransferNs(wire, 1), 334);
  EXPECT_EQ(WireTransferNs(wire, 3), 1000);
}

DeviceState Device(double link_latency_ms, double link_bandwidth_mbps) {
  DeviceParams params;  // 5 ms, 200 MB/s, 8 servers
  params.link_latency_ms = link_latency_ms;
  params.link_bandwidth_mbps = link_bandwidth_mbps;
  EXPECT_EQ(DeviceParamsError(params), nullptr);
  return MakeDeviceState(params);
}

TEST(LinkStage, OffByDefaultAndThenExactlyTheDevice) {
  DeviceState linked = Device(0, 0);
  DeviceState plain = MakeDeviceState(DeviceParams());
  EXPECT_FALSE(linked.link_enabled);
  for (const int64_t now : {int64_t{0}, 1 * kMs, 2 * kMs}) {
    EXPECT_EQ(ChargeLinkedRequest(&linked, now, 1000000, LinkDirection::kDataOut),
              ChargeRequest(&plain, now, 1000000));
  }
}

TEST(LinkStage, AWriteSendsItsDataOutThenTheDeviceThenAnAckBack) {
  DeviceState device = Device(1, 100);
  // Out: 10 ms on the wire + 1 ms; device: 5 ms + 5 ms; ack back: 1 ms.
  EXPECT_EQ(ChargeLinkedRequest(&device, 0, 1000000, LinkDirection::kDataOut),
            11 * kMs + 10 * kMs + 1 * kMs);
  EXPECT_EQ(device.link_out.free_ns, 10 * kMs);
  EXPECT_EQ(device.link_back.free_ns, 21 * kMs);
}

TEST(LinkStage, AReadSendsARequestOutAndItsDataBack) {
  DeviceState device = Device(1, 100);
  // Out: 1 ms; device: 10 ms; back: 10 ms on the wire + 1 ms.
  EXPECT_EQ(ChargeLinkedRequest(&device, 0, 1000000, LinkDirection::kDataBack),
            1 * kMs + 10 * kMs + 11 * kMs);
  EXPECT_EQ(device.link_out.free_ns, 0);
}

TEST(LinkStage, RequestsShareTheWiresInSeriesWithTheDevice) {
  DeviceState device = Device(0, 100);  // the link's bandwidth alone, half the device's
  // Two writes of 1 MB at once: the second one's data leaves when the first one's is out.
  const int64_t first = ChargeLinkedRequest(&device, 0, 1000000, LinkDirection::kDataOut);
  const int64_t second = ChargeLinkedRequest(&device, 0, 1000000, LinkDirection::kDataOut);
  EXPECT_EQ(first, 10 * kMs + 10 * kMs);
  // At the device at 20 ms: its channel is free again (first used it 15-20 ms).
  EXPECT_EQ(second, 20 * kMs + 10 * kMs);
}

TEST(LinkStage, OnWithLatencyAloneOrBandwidthAlone) {
  EXPECT_TRUE(Device(0.5, 0).link_enabled);
  EXPECT_TRUE(Device(0, 50).link_enabled);
}

TEST(LinkStage, ParamsAreCheckedAndComeFromTheEnvironmentContract) {
  DeviceParams params;
  EXPECT_EQ(SetDeviceParam(&params, DeviceParam::kLinkLatencyMs, "0.5"), nullptr);
  EXPECT_EQ(SetDeviceParam(&params, DeviceParam::kLinkBandwidthMbps, "100"), nullptr);
  EXPECT_EQ(params.link_latency_ms, 0.5);
  EXPECT_EQ(params.link_bandwidth_mbps, 100);
  EXPECT_NE(SetDeviceParam(&params, DeviceParam::kLinkLatencyMs, "-1"), nullptr);
  EXPECT_NE(SetDeviceParam(&params, DeviceParam::kLinkBandwidthMbps, "1e-9"), nullptr);
  EXPECT_STREQ(EnvVariable(DeviceParam::kLinkLatencyMs), "STAGIO_EMU_LINK_LATENCY_MS");
  EXPECT_STREQ(EnvVariable(DeviceParam::kLinkBandwidthMbps), "STAGIO_EMU_LINK_BANDWIDTH_MBPS");
  char text[64];
  FormatDeviceParam(params, DeviceParam::kLinkLatencyMs, text, sizeof(text));
  EXPECT_STREQ(text, "0.5");
}

}  // namespace
}  // namespace stagio::emu
