// The emulated storage device: a pure, deterministic timing model, with no clock and no I/O, so
// tests can drive it with made-up times and check finish times to the nanosecond.
//
// The device has `parallel` servers and ONE shared bandwidth channel. A request arriving at
// `now` with `bytes`:
//   1. takes the server slot that frees earliest (the lowest index among equals) and starts at
//      start = max(now, slot_free);
//   2. spends the per-request latency on that server (seek, RPC, metadata: this part overlaps
//      across servers);
//   3. then moves its bytes through the channel, one transfer at a time, after the channel's
//      seek (the per-request cost of a disk behind all the servers, which no other request's
//      overlaps; 0 by default):
//      transfer_start = max(start + latency, channel_free),
//      finish = transfer_start + seek + transfer_ns(bytes), channel_free = finish;
//   4. the slot stays busy until finish.
// So latency is hidden by parallelism but bandwidth is not: N concurrent large requests take N
// times as long as one, as on a real shared file system link.
// A request with 0 bytes (an fsync, a read at end of file) moves nothing: it neither waits for
// nor occupies the channel, and on an idle device it costs exactly the latency.
//
// Integer rounding rule, fixed once when the state is made: latency_ns = round(latency_ms * 1e6),
// bandwidth = round(bandwidth_mbps * 1e6) bytes per second (MB = 1e6 bytes), and
// transfer_ns(bytes) = ceil(bytes * 1e9 / bandwidth), computed exactly in 128-bit integers.
//
// Optional link stage (ChargeLinkedRequest): the path from the application to the device
// crosses a network link, one wire each way (wire_model.h), in series with the device: a
// request goes out on the outbound wire (a write carries its data), is served by the device,
// and its reply comes back on the return wire (a read carries its data). So a request pays the
// link latency twice (there and back) and its bytes once, on the wire of their direction, and
// all requests share both wires. This is what stagio-link does to a daemon's traffic, so the
// modes without a daemon pay the same link. Off when the link's latency and bandwidth are both
// 0; with bandwidth 0 alone the wires are unlimited and only the latency is paid.
//
// DeviceState is plain data (fixed arrays, no pointers) so it can live in a shared-memory
// segment used by several processes; the caller provides the locking.
#pragma once

#include <cstdint>

#include "wire_model.h"

namespace stagio::emu {

constexpr int kMaxParallelServers = 64;

struct DeviceParams {
  double latency_ms = 5.0;
  double bandwidth_mbps = 200.0;  // 1 MB = 1e6 bytes
  int parallel = 8;
  double seek_ms = 0;              // per request with bytes, on the shared channel
  double link_latency_ms = 0;      // one way; 0 and bandwidth 0: no link stage
  double link_bandwidth_mbps = 0;  // each way; 0: unlimited
};

// Why `params` cannot make a device ("bandwidth must be ..."), or nullptr if they can.
// Static strings only: the LD_PRELOAD shim calls this where allocating is unwelcome.
const char* DeviceParamsError(const DeviceParams& params);

struct DeviceState {
  int64_t latency_ns;
  int64_t bandwidth_bytes_per_s;
  int32_t parallel;
  int64_t seek_ns;
  int64_t slot_free_ns[kMaxParallelServers];
  int64_t channel_free_ns;
  int32_t link_enabled;
  WireState link_out;   // towards the device: requests, and the data of writes
  WireState link_back;  // back to the caller: replies, and the data of reads
};

enum class LinkDirection { kDataOut, kDataBack };

// An idle device. `params` must be valid (DeviceParamsError returns nullptr).
DeviceState MakeDeviceState(const DeviceParams& params);

// ceil(bytes * 1e9 / bytes_per_s), exactly, capped far inside int64; bytes_per_s > 0.
int64_t BytesAtRateNs(uint64_t bytes, int64_t bytes_per_s);

// Time the channel needs for `bytes`, with the rounding rule above.
int64_t TransferNs(const DeviceState& device, uint64_t bytes);

// Admits one request and returns when it finishes (ns, same clock as `now_ns`).
int64_t ChargeRequest(DeviceState* device, int64_t now_ns, uint64_t bytes);

// The same through the link stage when it is on (see above): `bytes` cross the wire of
// `direction`; the request and reply messages themselves cross the other.
int64_t ChargeLinkedRequest(DeviceState* device, int64_t now_ns, uint64_t bytes,
                            LinkDirection direction);

}  // namespace stagio::emu
