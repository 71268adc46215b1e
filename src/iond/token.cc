#include "iond/token.h"

#include "common/small_file.h"
#include "net/messages.h"

namespace stagio {
namespace iond {

std::string StripTrailingNewline(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

Status ReadTokenFile(const std::string& path, std::string* token) {
  std::string read;
  Status status = ReadSmallFile(path, net::kMaxTokenBytes, &read);
  if (!status.ok()) return Status::InvalidArgument("token file " + status.message());
  read = StripTrailingNewline(std::move(read));
  if (read.empty()) return Status::InvalidArgument("token file " + path + " is empty");
  *token = std::move(read);
  return Status::OK();
}

bool TokensEqual(const std::string& expected, const std::string& given) {
  // Every byte of `given` is looked at whatever differs, and the length difference is folded
  // in instead of returning early.
  unsigned char difference = expected.size() == given.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    const unsigned char want =
        expected.empty() ? 0 : static_cast<unsigned char>(expected[i % expected.size()]);
    difference |= static_cast<unsigned char>(want ^ static_cast<unsigned char>(given[i]));
  }
  return difference == 0 && !expected.empty();
}

}  // namespace iond
}  // namespace stagio
