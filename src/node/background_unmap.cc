#include "node/background_unmap.h"

#include <sys/mman.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace stagio {

namespace {

class Unmapper {
 public:
  // False if the thread could not be started; the caller unmaps itself.
  bool Queue(void* mapping, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!started_) {
      try {
        // Detached and never joined: it holds no resource the process needs at exit, and a
        // mapping still queued then goes with the process.
        std::thread([this] { Run(); }).detach();
      } catch (const std::system_error&) {
        return false;
      }
      started_ = true;
    }
    pending_.emplace_back(mapping, bytes);
    wake_.notify_one();
    return true;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return !pending_.empty(); });
      const std::pair<void*, size_t> next = pending_.front();
      pending_.pop_front();
      lock.unlock();
      munmap(next.first, next.second);
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<void*, size_t>> pending_;
  bool started_ = false;
};

}  // namespace

void UnmapInBackground(void* mapping, size_t bytes) {
  // Never destroyed: its thread may still run while static destructors do at exit.
  static Unmapper* const unmapper = new Unmapper();
  if (!unmapper->Queue(mapping, bytes)) munmap(mapping, bytes);
}

}  // namespace stagio
