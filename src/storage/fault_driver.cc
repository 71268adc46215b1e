#include "storage/fault_driver.h"

#include "common/text.h"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace stagio {
namespace {

// In the order of FaultInjectingDriver::Op.
const char* const kOpNames[] = {"open", "read", "write", "sync"};

// Index into kOpNames, or -1.
int FindOp(const std::string& name) {
  for (int op = 0; op < static_cast<int>(sizeof(kOpNames) / sizeof(kOpNames[0])); ++op) {
    if (name == kOpNames[op]) return op;
  }
  return -1;
}

// Digits only, no sign, no overflow.
bool ParseCount(const std::string& text, uint64_t* count) {
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *count = value;
  return true;
}

std::vector<std::string> SplitOnComma(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    parts.push_back(Trim(text.substr(start, comma - start)));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

// Wraps a target file; every call that a rule can hit asks the driver first, and an injected
// failure returns before the target is touched so tests can see that nothing was written.
class FaultInjectingFile : public DriverFile {
 public:
  FaultInjectingFile(FaultInjectingDriver* driver, std::unique_ptr<DriverFile> target)
      : driver_(driver), target_(std::move(target)) {}

  Status ReadAt(uint64_t offset, void* buffer, size_t length, size_t* bytes_read) override {
    Status status = driver_->MaybeInject(FaultInjectingDriver::kRead, path(), offset);
    if (!status.ok()) {
      *bytes_read = 0;
      return status;
    }
    return target_->ReadAt(offset, buffer, length, bytes_read);
  }

  Status WriteAt(uint64_t offset, const void* buffer, size_t length) override {
    Status status = driver_->MaybeInject(FaultInjectingDriver::kWrite, path(), offset);
    if (!status.ok()) return status;
    return target_->WriteAt(offset, buffer, length);
  }

  Status GetSize(uint64_t* size) override { return target_->GetSize(size); }
  Status Truncate(uint64_t size) override { return target_->Truncate(size); }

  Status Sync() override {
    Status status = driver_->MaybeInject(FaultInjectingDriver::kSync, path(), 0);
    if (!status.ok()) return status;
    return target_->Sync();
  }

  Status Flush() override { return target_->Flush(); }
  Status Invalidate() override { return target_->Invalidate(); }
  std::optional<uint64_t> LargestSize() override { return target_->LargestSize(); }
  void SetBlockLayout(uint64_t block_size, uint64_t aggregators) override {
    target_->SetBlockLayout(block_size, aggregators);
  }
  const std::string& path() const override { return target_->path(); }

 private:
  FaultInjectingDriver* const driver_;
  const std::unique_ptr<DriverFile> target_;
};

Status FaultInjectingDriver::Open(const std::string& path, OpenAccess access,
                                  std::unique_ptr<DriverFile>* file) {
  Status status = MaybeInject(kOpen, path, 0);
  if (!status.ok()) return status;
  std::unique_ptr<DriverFile> target_file;
  status = target()->Open(path, access, &target_file);
  if (!status.ok()) return status;
  *file = std::make_unique<FaultInjectingFile>(this, std::move(target_file));
  return Status::OK();
}

Status FaultInjectingDriver::SetFaults(const std::string& spec) {
  const std::string trimmed = Trim(spec);
  if (trimmed.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    rules_.fill(Rule());
    return Status::OK();
  }
  // Parse everything before touching the rules: a malformed spec must change nothing.
  std::vector<std::pair<int, Rule>> updates;
  for (const std::string& item : SplitOnComma(trimmed)) {
    const size_t equals = item.find('=');
    if (equals == std::string::npos) {
      return Status::InvalidArgument("fault rule '" + item + "' is not op=action");
    }
    const int op = FindOp(Trim(item.substr(0, equals)));
    if (op < 0) {
      return Status::InvalidArgument("fault rule '" + item +
                                     "': op must be open, read, write or sync");
    }
    Rule rule;
    if (!ParseAction(Trim(item.substr(equals + 1)), &rule)) {
      return Status::InvalidArgument("fault rule '" + item +
                                     "': action must be fail, fail_after:N or ok");
    }
    updates.emplace_back(op, rule);
  }
  // Later rules for the same op win, as if the spec had been given in several calls.
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [op, rule] : updates) rules_[op] = rule;
  return Status::OK();
}

bool FaultInjectingDriver::ParseAction(const std::string& action, Rule* rule) {
  static const std::string kFailAfter = "fail_after:";
  if (action == "fail") {
    rule->mode = Mode::kFail;
  } else if (action == "ok") {
    rule->mode = Mode::kNone;
  } else if (action.compare(0, kFailAfter.size(), kFailAfter) == 0 &&
             ParseCount(action.substr(kFailAfter.size()), &rule->calls_left)) {
    rule->mode = Mode::kFailAfter;
  } else {
    return false;
  }
  return true;
}

uint64_t FaultInjectingDriver::injected(const std::string& op) const {
  const int index = FindOp(op);
  if (index < 0) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  return injected_[index];
}

Status FaultInjectingDriver::MaybeInject(Op op, const std::string& path, uint64_t offset) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Rule& rule = rules_[op];
    switch (rule.mode) {
      case Mode::kNone:
        return Status::OK();
      case Mode::kFailAfter:
        if (rule.calls_left > 0) {
          --rule.calls_left;
          return Status::OK();
        }
        break;
      case Mode::kFail:
        break;
    }
    ++injected_[op];
  }
  return Status::IOError(std::string("injected fault: ") + kOpNames[op] + " " + path +
                         " offset " + std::to_string(offset));
}

}  // namespace stagio
