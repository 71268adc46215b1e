// One direction of the emulated link as stagio-link uses it: the wire model (wire_model.h)
// plus the chunks that are on their way, in arrival order. Pure: no clock, no sockets, so the
// tests check departure and arrival times exactly.
//
// Every connection's chunks of this direction share the one wire, so connections slow each
// other down as on a real link. Arrival times on one wire never decrease (each chunk departs
// no earlier than the one before it and all pay the same latency), so one FIFO per direction
// delivers every connection's chunks in order, and the earliest arrival is always at the front.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "wire_model.h"

namespace stagio::link {

struct Chunk {
  uint64_t connection = 0;  // whose chunk
  std::string data;         // empty with end_of_stream
  bool end_of_stream = false;  // the sender closed: close the pair once this is delivered
  int64_t depart_ns = 0;
  int64_t arrive_ns = 0;
};

class DelayLine {
 public:
  DelayLine(double latency_ms, double bandwidth_mbps);

  // Puts a chunk read at `now_ns` on the wire; returns it as scheduled (times filled in).
  const Chunk& Send(int64_t now_ns, uint64_t connection, std::string data);
  // The sender of `connection` closed: an empty marker that arrives after its last data.
  const Chunk& SendEndOfStream(int64_t now_ns, uint64_t connection);

  bool Empty() const { return in_flight_.empty(); }
  // The arrival time of the next chunk; only when not Empty().
  int64_t NextArrivalNs() const { return in_flight_.front().arrive_ns; }
  // Removes and returns the next chunk if it has arrived by `now_ns`.
  bool PopArrived(int64_t now_ns, Chunk* chunk);

  // Time the wire spent carrying bytes, for the stats.
  int64_t BusyNs() const { return busy_ns_; }

 private:
  const Chunk& Schedule(int64_t now_ns, Chunk chunk);

  emu::WireState wire_;
  std::deque<Chunk> in_flight_;
  int64_t busy_ns_ = 0;
};

}  // namespace stagio::link
