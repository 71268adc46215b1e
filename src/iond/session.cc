#include "iond/session.h"

#include <string>

namespace stagio {
namespace iond {

namespace {

Status UnknownHandle(uint64_t number) {
  return Status::InvalidArgument("unknown file handle " + std::to_string(number) +
                                 " (not opened on this connection, or closed)");
}

}  // namespace

std::atomic<uint64_t> Session::next_number_{1};

uint64_t Session::Add(Handle handle) {
  const uint64_t number = next_number_.fetch_add(1);
  std::lock_guard<std::mutex> lock(mutex_);
  handles_.emplace(number, std::move(handle));
  return number;
}

Status Session::Find(uint64_t number, Handle* handle) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = handles_.find(number);
  if (it == handles_.end()) return UnknownHandle(number);
  *handle = it->second;
  return Status::OK();
}

Status Session::Remove(uint64_t number, Handle* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = handles_.find(number);
  if (it == handles_.end()) return UnknownHandle(number);
  *handle = std::move(it->second);
  handles_.erase(it);
  return Status::OK();
}

std::vector<Handle> Session::TakeAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Handle> all;
  for (auto& [number, handle] : handles_) all.push_back(std::move(handle));
  handles_.clear();
  return all;
}

}  // namespace iond
}  // namespace stagio
