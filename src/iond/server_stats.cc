#include "iond/server_stats.h"

namespace stagio {
namespace iond {

nlohmann::json ServerStats::ToJson() const {
  nlohmann::json requests = nlohmann::json::object();
#define STAGIO_MESSAGE_COUNT(name, code, request, reply) requests[#name] = requests_[code].load();
  STAGIO_IOND_MESSAGES(STAGIO_MESSAGE_COUNT)
#undef STAGIO_MESSAGE_COUNT
  return {
      {"requests", requests},
      {"bytes_read", bytes_read_.load()},
      {"bytes_written", bytes_written_.load()},
      {"connections",
       {{"accepted", accepted_.load()},
        {"refused", refused_.load()},
        {"dropped", dropped_.load()},
        {"hello_timeouts", hello_timeouts_.load()},
        {"evicted", evicted_.load()},
        {"over_capacity", over_capacity_.load()},
        {"peak_in_flight", peak_in_flight_.load()},
        {"peak_in_flight_bytes", peak_in_flight_bytes_.load()}}},
  };
}

}  // namespace iond
}  // namespace stagio
