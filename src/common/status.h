// Status: the result of an internal operation. A small value type, as in LevelDB: no exception
// crosses a module boundary. The MPI layer turns a non-OK Status into an MPI error class.
#pragma once

#include <string>
#include <utility>

namespace stagio {

class Status {
 public:
  enum class Code { kOk, kIOError, kInvalidArgument, kNotSupported, kNotFound };

  Status() = default;
  static Status OK() { return Status(); }
  static Status IOError(std::string message) { return Status(Code::kIOError, std::move(message)); }
  static Status InvalidArgument(std::string message) {
    return Status(Code::kInvalidArgument, std::move(message));
  }
  static Status NotSupported(std::string message) {
    return Status(Code::kNotSupported, std::move(message));
  }
  static Status NotFound(std::string message) { return Status(Code::kNotFound, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace stagio
