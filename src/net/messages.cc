#include "net/messages.h"

namespace stagio {
namespace net {

WireStatus ToWire(const Status& status) {
  return WireStatus{static_cast<uint8_t>(status.code()), status.message()};
}

Status FromWire(const WireStatus& status) {
  switch (static_cast<Status::Code>(status.code)) {
    case Status::Code::kOk: return Status::OK();
    case Status::Code::kIOError: return Status::IOError(status.message);
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(status.message);
    case Status::Code::kNotSupported: return Status::NotSupported(status.message);
    case Status::Code::kNotFound: return Status::NotFound(status.message);
  }
  // A code this side does not know is still a failure, never success.
  return Status::IOError(status.message + " (status code " + std::to_string(status.code) + ")");
}

const char* MessageName(uint16_t code) {
  switch (code) {
#define STAGIO_MESSAGE_NAME(name, wire_code, request, reply) \
  case wire_code: return #name;
    STAGIO_IOND_MESSAGES(STAGIO_MESSAGE_NAME)
#undef STAGIO_MESSAGE_NAME
  }
  return "unknown";
}

bool IsKnownMessage(uint16_t code) {
  switch (code) {
#define STAGIO_MESSAGE_KNOWN(name, wire_code, request, reply) case wire_code:
    STAGIO_IOND_MESSAGES(STAGIO_MESSAGE_KNOWN)
#undef STAGIO_MESSAGE_KNOWN
    return true;
  }
  return false;
}

}  // namespace net
}  // namespace stagio
