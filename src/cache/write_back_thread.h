// WriteBackThread: the rank's I/O thread, as far as write-back goes.
//
// Writers call Notify() after dirtying the cache; it is cheap and wakes the thread only when the
// policy says flushing should start. The thread then writes back least-recently-modified blocks
// until the policy says stop. It calls no MPI, so it needs no MPI thread level.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "cache/block_cache.h"
#include "cache/write_back_policy.h"

namespace stagio {

class WriteBackThread {
 public:
  WriteBackThread(BlockCache* cache, WriteBackPolicy policy);
  ~WriteBackThread();  // stops the thread; does not flush (callers flush first)

  void Notify();
  void SetPolicy(WriteBackPolicy policy);
  // Blocks until no write-back pass is running (tests use it to observe a settled cache).
  void WaitIdle();

 private:
  void Run();

  BlockCache* cache_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  WriteBackPolicy policy_;
  bool requested_ = false;
  bool running_pass_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace stagio
