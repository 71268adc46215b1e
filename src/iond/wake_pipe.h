// WakePipe: how one thread wakes another that sleeps in poll(). The sleeper polls read_fd()
// with its sockets; Wake writes a byte, which needs no lock and never closes a descriptor the
// sleeper is polling. Level-triggered: the sleeper Drains it before its next poll.
#pragma once

#include <string>

#include "common/status.h"
#include "net/socket.h"

namespace stagio {
namespace iond {

class WakePipe {
 public:
  // `user` names the thread for the error message ("the accept thread").
  Status Open(const std::string& user);
  int read_fd() const { return read_.get(); }
  // From any thread. A full pipe already wakes the sleeper, so a failed write is fine.
  void Wake();
  // Reads every byte written so far.
  void Drain();

 private:
  net::UniqueFd read_;
  net::UniqueFd write_;
};

}  // namespace iond
}  // namespace stagio
