#include "node/shared_lock.h"

#include <cerrno>
#include <ctime>

namespace stagio {

void SharedMutex::Initialize() {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&mutex_, &attributes);
  pthread_mutexattr_destroy(&attributes);
}

bool SharedMutex::Lock() {
  if (pthread_mutex_lock(&mutex_) != EOWNERDEAD) return true;
  pthread_mutex_consistent(&mutex_);
  return false;
}

void SharedMutex::Unlock() { pthread_mutex_unlock(&mutex_); }

void SharedCondition::Initialize() {
  pthread_condattr_t attributes;
  pthread_condattr_init(&attributes);
  pthread_condattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
  pthread_cond_init(&condition_, &attributes);
  pthread_condattr_destroy(&attributes);
}

bool SharedCondition::TimedWait(SharedMutex& mutex, std::chrono::milliseconds timeout) {
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  const long long nanoseconds =
      deadline.tv_nsec + static_cast<long long>(timeout.count()) * 1000000LL;
  deadline.tv_sec += static_cast<time_t>(nanoseconds / 1000000000LL);
  deadline.tv_nsec = static_cast<long>(nanoseconds % 1000000000LL);
  if (pthread_cond_timedwait(&condition_, mutex.native(), &deadline) != EOWNERDEAD) return true;
  pthread_mutex_consistent(mutex.native());
  return false;
}

void SharedCondition::NotifyAll() { pthread_cond_broadcast(&condition_); }

}  // namespace stagio
