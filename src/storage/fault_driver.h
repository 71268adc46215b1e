// FaultInjectingDriver: makes chosen storage calls fail on purpose, so tests (and
// stagio_inject_faults) can check how errors travel up through the caches to MPI.
//
// Rules follow the grammar of stagio_inject_faults in include/stagio/stagio.h:
// "op=action[,op=action...]" with op open|read|write|sync and action fail | fail_after:N | ok.
// Rules can be changed at any time from any thread; files opened earlier see the change.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "storage/driver.h"

namespace stagio {

class FaultInjectingFile;

class FaultInjectingDriver : public DriverWrapper {
 public:
  // `target` must outlive this driver, and this driver must outlive the files it opens.
  explicit FaultInjectingDriver(Driver* target) : DriverWrapper(target) {}
  FaultInjectingDriver(const FaultInjectingDriver&) = delete;
  FaultInjectingDriver& operator=(const FaultInjectingDriver&) = delete;

  Status Open(const std::string& path, OpenAccess access,
              std::unique_ptr<DriverFile>* file) override;
  const char* name() const override { return "fault"; }

  // Applies the rules of `spec` on top of the current ones; an empty spec removes all rules.
  // A malformed spec returns InvalidArgument and changes nothing.
  Status SetFaults(const std::string& spec);

  // How many calls of `op` ("open", "read", "write", "sync") failed on purpose so far; 0 for other ops.
  uint64_t injected(const std::string& op) const;

 private:
  friend class FaultInjectingFile;

  enum Op { kOpen, kRead, kWrite, kSync, kOpCount };
  enum class Mode { kNone, kFail, kFailAfter };
  struct Rule {
    Mode mode = Mode::kNone;
    uint64_t calls_left = 0;  // kFailAfter: calls that still succeed, counted over all files
  };

  // Parses "fail", "fail_after:N" or "ok" into *rule; false if it is none of them.
  static bool ParseAction(const std::string& action, Rule* rule);
  // Called by the files before each call of `op`: an error if a rule says this call fails.
  Status MaybeInject(Op op, const std::string& path, uint64_t offset);

  mutable std::mutex mutex_;
  std::array<Rule, kOpCount> rules_{};
  std::array<uint64_t, kOpCount> injected_{};
};

}  // namespace stagio
