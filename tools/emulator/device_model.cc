// The device model: see device_model.h for the queueing rules and the rounding rule.
#include "device_model.h"

#include <cmath>

namespace stagio::emu {
namespace {

// Bounds that keep every time well inside int64 nanoseconds (about 292 years): a finish time is
// now + latency + transfer, and sums of charged times are kept as well.
constexpr double kMaxLatencyMs = 1e6;          // 1000 s per request
constexpr double kMinBandwidthMbps = 1e-6;     // 1 byte per second
constexpr double kMaxBandwidthMbps = 1e9;      // 1 PB/s
constexpr int64_t kMaxTransferNs = INT64_MAX / 4;

int64_t Later(int64_t a, int64_t b) { return a > b ? a : b; }

}  // namespace

const char* DeviceParamsError(const DeviceParams& params) {
  if (!std::isfinite(params.latency_ms) || params.latency_ms < 0 ||
      params.latency_ms > kMaxLatencyMs) {
    return "latency must be a number of milliseconds from 0 to 1e6";
  }
  if (!std::isfinite(params.bandwidth_mbps) || params.bandwidth_mbps < kMinBandwidthMbps ||
      params.bandwidth_mbps > kMaxBandwidthMbps) {
    return "bandwidth must be a number of MB/s (1 MB = 1e6 bytes) from 1e-6 to 1e9";
  }
  if (!std::isfinite(params.seek_ms) || params.seek_ms < 0 || params.seek_ms > kMaxLatencyMs) {
    return "seek must be a number of milliseconds from 0 to 1e6";
  }
  if (params.parallel < 1 || params.parallel > kMaxParallelServers) {
    return "parallel servers must be a whole number from 1 to 64";
  }
  if (!std::isfinite(params.link_latency_ms) || params.link_latency_ms < 0 ||
      params.link_latency_ms > kMaxLatencyMs) {
    return "link latency must be a number of milliseconds from 0 to 1e6";
  }
  if (!std::isfinite(params.link_bandwidth_mbps) ||
      (params.link_bandwidth_mbps != 0 && (params.link_bandwidth_mbps < kMinBandwidthMbps ||
                                           params.link_bandwidth_mbps > kMaxBandwidthMbps))) {
    return "link bandwidth must be 0 (unlimited) or a number of MB/s from 1e-6 to 1e9";
  }
  return nullptr;
}

DeviceState MakeDeviceState(const DeviceParams& params) {
  DeviceState device = {};
  device.latency_ns = std::llround(params.latency_ms * 1e6);
  device.bandwidth_bytes_per_s = std::llround(params.bandwidth_mbps * 1e6);
  device.parallel = params.parallel;
  device.seek_ns = std::llround(params.seek_ms * 1e6);
  device.link_enabled = params.link_latency_ms > 0 || params.link_bandwidth_mbps > 0;
  device.link_out = MakeWireState(params.link_latency_ms, params.link_bandwidth_mbps);
  device.link_back = device.link_out;
  return device;
}

int64_t BytesAtRateNs(uint64_t bytes, int64_t bytes_per_s) {
  const unsigned __int128 numerator = static_cast<unsigned __int128>(bytes) * 1000000000u;
  const unsigned __int128 rate = static_cast<unsigned __int128>(bytes_per_s);
  const unsigned __int128 ns = (numerator + rate - 1) / rate;
  return ns > static_cast<unsigned __int128>(kMaxTransferNs) ? kMaxTransferNs
                                                             : static_cast<int64_t>(ns);
}

int64_t TransferNs(const DeviceState& device, uint64_t bytes) {
  return BytesAtRateNs(bytes, device.bandwidth_bytes_per_s);
}

int64_t ChargeRequest(DeviceState* device, int64_t now_ns, uint64_t bytes) {
  int slot = 0;
  for (int i = 1; i < device->parallel; ++i) {
    if (device->slot_free_ns[i] < device->slot_free_ns[slot]) slot = i;
  }
  const int64_t start = Later(now_ns, device->slot_free_ns[slot]);
  const int64_t ready_to_transfer = start + device->latency_ns;
  int64_t finish = ready_to_transfer;
  if (bytes > 0) {
    finish = Later(ready_to_transfer, device->channel_free_ns) + device->seek_ns +
             TransferNs(*device, bytes);
    device->channel_free_ns = finish;
  }
  device->slot_free_ns[slot] = finish;
  return finish;
}

int64_t ChargeLinkedRequest(DeviceState* device, int64_t now_ns, uint64_t bytes,
                            LinkDirection direction) {
  if (!device->link_enabled) return ChargeRequest(device, now_ns, bytes);
  const bool out = direction == LinkDirection::kDataOut;
  const int64_t at_device = CrossWire(&device->link_out, now_ns, out ? bytes : 0).arrive_ns;
  const int64_t served = ChargeRequest(device, at_device, bytes);
  return CrossWire(&device->link_back, served, out ? 0 : bytes).arrive_ns;
}

}  // namespace stagio::emu
