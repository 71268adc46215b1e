// HelperSequence: a pre-execution helper's place in one file's call sequence, and lag detection.
//
// The helper's prefetch calls for a file are numbered in the main thread's numbering
// (MainThreadProgress): the first call after the helper took the file stands for the main
// thread's next call. If the main thread has already begun the call a prefetch stands for, the
// helper has fallen behind: the data is being read or already used, and fetching it now would
// only compete with the main thread. The helper then skips the call's fetch (seed 001, section
// IV-D) and keeps going, so that its next calls are ahead again.
//
// Threading: the helper thread's (the progress it reads is the main thread's atomics).
#pragma once

#include <cstdint>
#include <memory>

#include "preexec/main_thread_progress.h"

namespace stagio {

class HelperSequence {
 public:
  // The helper's next call stands for the main thread's call `last_begun + 1` on the file:
  // its next call when the helper takes a file the main thread is using, the first (0) when
  // the helper takes it at its open.
  HelperSequence(std::shared_ptr<MainThreadProgress> main, uint64_t last_begun)
      : main_(std::move(main)), last_(last_begun) {}

  // Numbers the helper's next call.
  uint64_t Next() { return ++last_; }
  // True if the main thread has begun call `sequence` (or the file is closed): too late.
  bool Behind(uint64_t sequence) const { return main_->begun() >= sequence || main_->closed(); }

  MainThreadProgress& main() const { return *main_; }
  const std::shared_ptr<MainThreadProgress>& shared_main() const { return main_; }

 private:
  std::shared_ptr<MainThreadProgress> main_;
  uint64_t last_;
};

}  // namespace stagio
