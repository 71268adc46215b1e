// DelayLine: see delay_line.h.
#include "delay_line.h"

#include <utility>

namespace stagio::link {

DelayLine::DelayLine(double latency_ms, double bandwidth_mbps)
    : wire_(emu::MakeWireState(latency_ms, bandwidth_mbps)) {}

const Chunk& DelayLine::Send(int64_t now_ns, uint64_t connection, std::string data) {
  Chunk chunk;
  chunk.connection = connection;
  chunk.data = std::move(data);
  return Schedule(now_ns, std::move(chunk));
}

const Chunk& DelayLine::SendEndOfStream(int64_t now_ns, uint64_t connection) {
  Chunk chunk;
  chunk.connection = connection;
  chunk.end_of_stream = true;
  return Schedule(now_ns, std::move(chunk));
}

const Chunk& DelayLine::Schedule(int64_t now_ns, Chunk chunk) {
  const emu::WireCrossing crossing = emu::CrossWire(&wire_, now_ns, chunk.data.size());
  busy_ns_ += emu::WireTransferNs(wire_, chunk.data.size());
  chunk.depart_ns = crossing.depart_ns;
  chunk.arrive_ns = crossing.arrive_ns;
  in_flight_.push_back(std::move(chunk));
  return in_flight_.back();
}

bool DelayLine::PopArrived(int64_t now_ns, Chunk* chunk) {
  if (in_flight_.empty() || in_flight_.front().arrive_ns > now_ns) return false;
  *chunk = std::move(in_flight_.front());
  in_flight_.pop_front();
  return true;
}

}  // namespace stagio::link
