// Data sieving: which extents of one access to read together, gaps included.
//
// A noncontiguous access (a tile's rows through a view) read extent by extent costs one
// storage request per extent. Like ROMIO's data sieving, stagio reads extents that lie close
// together as one span, gaps included, and takes the wanted bytes out of it. The gap bound
// keeps sparse accesses from reading much more than they want: 64 KiB costs less to read than
// a request's latency on a parallel file system. A span is at most 4 MiB, like ROMIO's
// ind_rd_buffer_size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpiio/flatten.h"

namespace stagio {

constexpr uint64_t kSieveGap = 64ull << 10;
constexpr uint64_t kSieveSpan = 4ull << 20;

// Calls visit(first, last, begin, end) for each span: extents [first, last) of `extents` (in
// file order) lie in file bytes [begin, end). A single extent longer than kSieveSpan is a span
// of its own.
template <typename Visit>
void ForEachSievedSpan(const std::vector<Extent>& extents, Visit visit) {
  for (size_t first = 0; first < extents.size();) {
    const uint64_t begin = static_cast<uint64_t>(extents[first].offset);
    uint64_t end = begin + extents[first].length;
    size_t last = first + 1;
    for (; last < extents.size(); ++last) {
      const uint64_t next = static_cast<uint64_t>(extents[last].offset);
      const uint64_t next_end = next + extents[last].length;
      if (next - end > kSieveGap || next_end - begin > kSieveSpan) break;
      end = next_end;
    }
    visit(first, last, begin, end);
    first = last;
  }
}

}  // namespace stagio
