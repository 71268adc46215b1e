// PrefetchPointer: a pre-execution helper's file pointer for one file (seed 001, section V-B).
//
// The helper's individual-pointer prefetch calls (stagio_prefetch_read, _write, _read_all, ...)
// use and move this pointer, and its prefetch seeks set it. It is not the file's individual
// pointer: the main thread's calls never move it, and it never moves theirs. Like MPI's pointer
// it counts etypes of the view (the helper's own view), and a new view resets it to 0.
//
// Threading: the helper thread's.
#pragma once

#include <cstdint>

namespace stagio {

class PrefetchPointer {
 public:
  enum class From { kStart, kCurrent, kEnd };

  explicit PrefetchPointer(int64_t position = 0) : position_(position) {}

  int64_t position() const { return position_; }
  // An access of `etypes` etypes at the pointer: returns where it starts and moves past it.
  int64_t Advance(int64_t etypes) {
    const int64_t start = position_;
    position_ += etypes;
    return start;
  }
  // As MPI_File_seek: `offset` etypes from the start, the current position, or `end` (the end
  // of file in etypes). False, and the pointer unchanged, if the result would be negative.
  bool Seek(int64_t offset, From from, int64_t end = 0) {
    const int64_t base = from == From::kStart ? 0 : from == From::kCurrent ? position_ : end;
    if (base + offset < 0) return false;
    position_ = base + offset;
    return true;
  }

 private:
  int64_t position_;
};

}  // namespace stagio
