// Session: the file handles one connection holds. Handles are numbered across the whole daemon
// and never reused, so a handle of one connection (or a closed one) is never valid on another.
// When the connection ends, its remaining handles are closed for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "iond/daemon_file.h"

namespace stagio {
namespace iond {

struct Handle {
  std::shared_ptr<DaemonFile> file;
  bool may_write = false;  // opened with write access
};

class Session {
 public:
  uint64_t Add(Handle handle);
  // The handle, or an error naming the unknown number.
  Status Find(uint64_t number, Handle* handle) const;
  // Takes the handle out; fails as Find does if it is unknown.
  Status Remove(uint64_t number, Handle* handle);
  std::vector<Handle> TakeAll();

 private:
  static std::atomic<uint64_t> next_number_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Handle> handles_;
};

}  // namespace iond
}  // namespace stagio
