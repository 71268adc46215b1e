// One direction of a network link, as a pure timing model: a serial wire with a bandwidth and a
// propagation latency. Shared by the emulator's link stage (stagio-emu --link-latency-ms ...)
// and by stagio-link, the delaying TCP relay, so that the direct modes of a benchmark and its
// daemon mode pay the link by the same rule.
//
// A message of `bytes` that is ready to leave at `now`:
//   depart = max(now, wire_free)          (the wire carries one message at a time, in order)
//   wire_free = depart + bytes / bandwidth (it occupies the wire while it is put on it)
//   arrive = wire_free + latency           (then it travels for the latency)
// So messages on one wire arrive in the order they left, and back-to-back messages pipeline:
// the second one's bytes go out while the first one travels. A message of 0 bytes takes no wire
// time but still waits for the wire and pays the latency (an acknowledgement queued behind
// data). Bandwidth 0 means unlimited: only the latency is paid.
//
// Rounding as in the device model (device_model.h): latency_ns = round(latency_ms * 1e6),
// bytes_per_s = round(bandwidth_mbps * 1e6), transfer time rounded up to whole nanoseconds.
// WireState is plain data, so it can live in the emulator's shared segment.
#pragma once

#include <cstdint>

namespace stagio::emu {

struct WireState {
  int64_t latency_ns;
  int64_t bytes_per_s;  // 0: unlimited
  int64_t free_ns;      // when the wire has put the last message on it
};

struct WireCrossing {
  int64_t depart_ns;  // when the message starts to go out
  int64_t arrive_ns;  // when its last byte arrives at the other end
};

// An idle wire. latency_ms >= 0, bandwidth_mbps >= 0 (0: unlimited); callers check ranges.
WireState MakeWireState(double latency_ms, double bandwidth_mbps);

// Time the wire needs to put `bytes` on it (0 when the bandwidth is unlimited).
int64_t WireTransferNs(const WireState& wire, uint64_t bytes);

// Sends one message of `bytes`, ready at `now_ns`; returns when it leaves and arrives.
WireCrossing CrossWire(WireState* wire, int64_t now_ns, uint64_t bytes);

}  // namespace stagio::emu
