// ScratchBuffer: the calling thread's staging buffer for bytes on their way between the cache
// and an application buffer that is not contiguous (or a sieved span's holes). One per thread,
// grown to the largest size asked for and kept, so a steady stream of calls allocates nothing.
// A caller must be done with it before anything it calls asks for it again.
#pragma once

#include <cstdint>
#include <vector>

namespace stagio {

inline std::vector<char>& ScratchBuffer(uint64_t size) {
  thread_local std::vector<char> scratch;
  if (scratch.size() < size) scratch.resize(size);
  return scratch;
}

}  // namespace stagio
