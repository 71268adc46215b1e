// RequestPool: the threads that serve requests, shared by every connection. Each connection
// reads its frames on its own thread and hands requests here, so a slow request (a storage
// read that misses) on one connection does not hold back the others, and requests of one
// connection run in parallel (pipelining); the per-connection bound on requests in flight
// (connection.h) keeps one client from queueing without limit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace stagio {
namespace iond {

class RequestPool {
 public:
  explicit RequestPool(size_t threads);
  ~RequestPool();  // runs what is queued, then joins
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;

  void Submit(std::function<void()> task);

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace iond
}  // namespace stagio
