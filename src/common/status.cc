#include "common/status.h"

namespace stagio {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kIOError: return "I/O error: " + message_;
    case Code::kInvalidArgument: return "invalid argument: " + message_;
    case Code::kNotSupported: return "not supported: " + message_;
    case Code::kNotFound: return "not found: " + message_;
  }
  return message_;
}

}  // namespace stagio
