// The wire model: see wire_model.h.
#include "wire_model.h"

#include <cmath>

#include "device_model.h"

namespace stagio::emu {

WireState MakeWireState(double latency_ms, double bandwidth_mbps) {
  WireState wire = {};
  wire.latency_ns = std::llround(latency_ms * 1e6);
  wire.bytes_per_s = std::llround(bandwidth_mbps * 1e6);
  return wire;
}

int64_t WireTransferNs(const WireState& wire, uint64_t bytes) {
  return wire.bytes_per_s > 0 ? BytesAtRateNs(bytes, wire.bytes_per_s) : 0;
}

WireCrossing CrossWire(WireState* wire, int64_t now_ns, uint64_t bytes) {
  WireCrossing crossing;
  crossing.depart_ns = now_ns > wire->free_ns ? now_ns : wire->free_ns;
  wire->free_ns = crossing.depart_ns + WireTransferNs(*wire, bytes);
  crossing.arrive_ns = wire->free_ns + wire->latency_ns;
  return crossing;
}

}  // namespace stagio::emu
