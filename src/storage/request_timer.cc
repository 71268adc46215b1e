#include "storage/request_timer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace stagio {

namespace {

// The thread's own schedstat, opened on first use (each thread reads its own: the file names
// the thread that opened it). Closed when the thread ends.
class SchedStat {
 public:
  SchedStat() : fd_(open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
  ~SchedStat() {
    if (fd_ >= 0) close(fd_);
  }
  SchedStat(const SchedStat&) = delete;
  SchedStat& operator=(const SchedStat&) = delete;

  // "<time on a core> <run delay> <timeslices>", in ns.
  int64_t RunDelay() const {
    if (fd_ < 0) return -1;
    char text[96];
    const ssize_t got = pread(fd_, text, sizeof(text) - 1, 0);
    if (got <= 0) return -1;
    text[got] = '\0';
    char* end = nullptr;
    std::strtoll(text, &end, 10);
    if (end == text) return -1;
    const char* delay = end;
    const long long value = std::strtoll(delay, &end, 10);
    return end == delay ? -1 : static_cast<int64_t>(value);
  }

 private:
  int fd_;
};

}  // namespace

int64_t ThreadRunDelayNanoseconds() {
  thread_local SchedStat stat;
  return stat.RunDelay();
}

RequestTimer::RequestTimer(uint64_t bytes) : start_(std::chrono::steady_clock::now()) {
  if (bytes >= kMinCorrectedBytes) run_delay_ns_ = ThreadRunDelayNanoseconds();
}

double RequestTimer::Seconds() const {
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (run_delay_ns_ < 0) return wall;
  const int64_t now = ThreadRunDelayNanoseconds();
  if (now < run_delay_ns_) return wall;
  return std::max(0.0, wall - static_cast<double>(now - run_delay_ns_) * 1e-9);
}

}  // namespace stagio
