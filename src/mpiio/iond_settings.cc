#include "mpiio/iond_settings.h"

#include "common/log.h"
#include "common/small_file.h"
#include "net/messages.h"

namespace stagio {
namespace {

// The token from stagio_iond_token, else from the file stagio_iond_token_file names, without
// the trailing newline an editor leaves. Empty if neither is set or the file is unreadable.
std::string TokenOf(const Settings& settings, bool speak) {
  if (!settings.iond_token.empty() || settings.iond_token_file.empty()) return settings.iond_token;
  std::string token;
  const Status read = ReadSmallFile(settings.iond_token_file, net::kMaxTokenBytes, &token);
  if (!read.ok()) {
    WarnOnce(speak, "stagio_iond_token_file: " + read.message() +
                        "; connecting to the I/O-node daemons without a token");
    return "";
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  return token;
}

}  // namespace

std::unique_ptr<IondDriver> MakeIondDriver(const Settings& settings, Driver* direct, bool speak) {
  if (settings.iond.empty()) return nullptr;
  std::vector<net::Address> daemons;
  Status status = net::Address::ParseList(settings.iond, &daemons);
  if (!status.ok()) {
    WarnOnce(speak, "stagio_iond: " + status.message() + "; the I/O-node tier is off");
    return nullptr;
  }
  const auto timeout = std::chrono::duration_cast<net::Timeout>(
      std::chrono::duration<double>(settings.iond_timeout));
  return std::make_unique<IondDriver>(direct, std::move(daemons), TokenOf(settings, speak),
                                      timeout, speak);
}

}  // namespace stagio
