// ServerStats: the daemon's own counters (requests by message, bytes, connections). The cache
// counters live with each file (FileStats); the stats file puts both together.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "net/messages.h"

namespace stagio {
namespace iond {

class ServerStats {
 public:
  void CountRequest(net::MessageType type) { Bump(requests_[static_cast<size_t>(type)]); }
  void AddBytesRead(uint64_t bytes) { bytes_read_.fetch_add(bytes, std::memory_order_relaxed); }
  void AddBytesWritten(uint64_t bytes) {
    bytes_written_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void CountAccepted() { Bump(accepted_); }
  // Refused in Hello (wrong token or version).
  void CountRefused() { Bump(refused_); }
  // Closed by the daemon for a protocol error (malformed or truncated frame, a payload that
  // does not decode, a reply frame, no Hello first); not for a client that hung up or reset.
  void CountDropped() { Bump(dropped_); }
  // Closed because the whole Hello did not arrive within hello_timeout.
  void CountHelloTimeout() { Bump(hello_timeouts_); }
  // Closed before Hello to make room for a newer connection (max_unauthenticated).
  void CountEvicted() { Bump(evicted_); }
  // Refused after a good Hello: the daemon served max_connections already.
  void CountOverCapacity() { Bump(over_capacity_); }

  // The most requests, and request and reply bytes, one connection had under way at once.
  void NoteInFlight(uint64_t requests, uint64_t bytes) {
    Raise(peak_in_flight_, requests);
    Raise(peak_in_flight_bytes_, bytes);
  }
  uint64_t peak_in_flight() const { return peak_in_flight_.load(); }
  uint64_t peak_in_flight_bytes() const { return peak_in_flight_bytes_.load(); }

  uint64_t accepted() const { return accepted_.load(); }
  uint64_t dropped() const { return dropped_.load(); }
  uint64_t refused() const { return refused_.load(); }
  uint64_t hello_timeouts() const { return hello_timeouts_.load(); }
  uint64_t evicted() const { return evicted_.load(); }
  uint64_t over_capacity() const { return over_capacity_.load(); }
  // {"requests": {"Hello": n, ...}, "bytes_read": n, "bytes_written": n,
  //  "connections": {"accepted": n, "refused": n, "dropped": n, "hello_timeouts": n,
  //                  "evicted": n, "over_capacity": n, "peak_in_flight": n,
  //                  "peak_in_flight_bytes": n}}
  nlohmann::json ToJson() const;

 private:
#define STAGIO_MESSAGE_CODE(name, code, request, reply) code,
  static constexpr size_t kCodes =
      size_t{std::max({STAGIO_IOND_MESSAGES(STAGIO_MESSAGE_CODE) 0})} + 1;
#undef STAGIO_MESSAGE_CODE
  static void Bump(std::atomic<uint64_t>& counter) {
    counter.fetch_add(1, std::memory_order_relaxed);
  }
  static void Raise(std::atomic<uint64_t>& peak, uint64_t value) {
    uint64_t seen = peak.load(std::memory_order_relaxed);
    while (value > seen && !peak.compare_exchange_weak(seen, value)) {
    }
  }

  std::array<std::atomic<uint64_t>, kCodes> requests_{};
  std::atomic<uint64_t> bytes_read_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> accepted_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> hello_timeouts_{0};
  std::atomic<uint64_t> evicted_{0};
  std::atomic<uint64_t> over_capacity_{0};
  std::atomic<uint64_t> peak_in_flight_{0};
  std::atomic<uint64_t> peak_in_flight_bytes_{0};
};

}  // namespace iond
}  // namespace stagio
