// The emulated storage device: a pure, deterministic timing model, with no clock and no I/O, so
// tests can drive it with made-up times and check finish times to the nanosecond.
//
// The device has `parallel` servers and ONE shared bandwidth channel. A request arriving at
// `now` with `bytes`:
//   1. takes the server slot that frees earliest (the lowest index among equals) and starts at
//      start = max(now, slot_free);
//   2. spends the per-request latency on that server (seek, RPC, metadata: this part overlaps
//      across servers);
//   3. then moves its bytes through the channel, one transfer at a time:
//      transfer_start = max(start + latency, channel_free),
//      finish = transfer_start + transfer_ns(bytes), channel_free = finish;
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
// DeviceState is plain data (fixed arrays, no pointers) so it can live in a shared-memory
// segment used by several processes; the caller provides the locking.
#pragma once

#include <cstdint>

namespace stagio::emu {

constexpr int kMaxParallelServers = 64;

struct DeviceParams {
  double latency_ms = 5.0;
  double bandwidth_mbps = 200.0;  // 1 MB = 1e6 bytes
  int parallel = 8;
};

// Why `params` cannot make a device ("bandwidth must be ..."), or nullptr if they can.
// Static strings only: the LD_PRELOAD shim calls this where allocating is unwelcome.
const char* DeviceParamsError(const DeviceParams& params);

struct DeviceState {
  int64_t latency_ns;
  int64_t bandwidth_bytes_per_s;
  int32_t parallel;
  int64_t slot_free_ns[kMaxParallelServers];
  int64_t channel_free_ns;
};

// An idle device. `params` must be valid (DeviceParamsError returns nullptr).
DeviceState MakeDeviceState(const DeviceParams& params);

// Time the channel needs for `bytes`, with the rounding rule above.
int64_t TransferNs(const DeviceState& device, uint64_t bytes);

// Admits one request and returns when it finishes (ns, same clock as `now_ns`).
int64_t ChargeRequest(DeviceState* device, int64_t now_ns, uint64_t bytes);

}  // namespace stagio::emu
