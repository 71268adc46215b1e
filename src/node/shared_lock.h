// SharedMutex and SharedCondition: a mutex and a condition variable that live in memory
// shared by several processes (the ranks of a node), built on POSIX process-shared, robust
// mutexes.
//
// Why robust: the ranks of a node are separate processes, and any of them may die (killed by
// the batch system, a crash in the application) while it holds a lock. A plain process-shared
// mutex would then block every other rank forever. A robust one hands the next locker
// EOWNERDEAD; Lock reports that as `owner_died`, and the caller decides what the state under
// the lock is worth (the node cache stops using itself: NodeBlockTable).
//
// Waiting is always bounded (TimedWait): the process that would signal may be gone, so waiters
// wake up now and then to check (NodeBlockTable looks whether the process it waits for lives).
#pragma once

#include <pthread.h>

#include <chrono>

namespace stagio {

class SharedMutex {
 public:
  // Initializes the mutex in place; exactly one process does it, before the others attach.
  void Initialize();
  // Locks. Returns false if the previous owner died holding it: the lock is held all the
  // same, and made consistent, but what it guarded may be half-changed.
  bool Lock();
  void Unlock();
  pthread_mutex_t* native() { return &mutex_; }

 private:
  pthread_mutex_t mutex_;
};

class SharedCondition {
 public:
  void Initialize();
  // Waits until notified or `timeout` passed; the mutex is held again on return. Returns false
  // if, on reacquiring it, its previous owner had died holding it.
  bool TimedWait(SharedMutex& mutex, std::chrono::milliseconds timeout);
  void NotifyAll();

 private:
  pthread_cond_t condition_;
};

// Holds a SharedMutex for a scope. `owner_died()` says whether taking it found a dead owner.
class SharedLock {
 public:
  explicit SharedLock(SharedMutex& mutex) : mutex_(mutex) { owner_died_ = !mutex_.Lock(); }
  ~SharedLock() {
    if (held_) mutex_.Unlock();
  }
  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;

  bool owner_died() const { return owner_died_; }
  // For I/O done outside the lock.
  void Unlock() {
    mutex_.Unlock();
    held_ = false;
  }
  // Returns false if the mutex's previous owner died holding it.
  bool Relock() {
    held_ = true;
    return mutex_.Lock();
  }
  // Returns false if the mutex's previous owner died holding it.
  bool Wait(SharedCondition& condition, std::chrono::milliseconds timeout) {
    return condition.TimedWait(mutex_, timeout);
  }

 private:
  SharedMutex& mutex_;
  bool held_ = true;
  bool owner_died_ = false;
};

}  // namespace stagio
