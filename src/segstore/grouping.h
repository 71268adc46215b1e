// Grouping (seed 002 §3.5): from the access graph to the segments to write.
//
// The seed partitions the relationship graph into strongly connected components, its
// strictest partition. A directed successor graph has a cycle only once a pattern has come
// round twice (the end of one pass read before the start of the next), so the seed's rule
// would group nothing after a first pass. Here a relation counts both ways, "read next to each
// other" rather than "read after": the components are then the extents that recent reads tied
// together, and one pass of a pattern is enough. The popularity rule still drops relations that
// stopped recurring.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "segstore/access_graph.h"
#include "segstore/extent.h"

namespace stagio {
namespace segstore {

// The groups in `nodes`: components of two or more extents, counting only extents read after
// `read_after` (older ones were grouped by an earlier run, or are no longer read). Each group
// lists its extents in the order they were last read, earliest first; groups are in the order
// of their first extents.
std::vector<std::vector<Extent>> FindGroups(const std::vector<AccessGraph::Node>& nodes,
                                            uint64_t read_after);

struct SegmentPlan {
  std::vector<Extent> pieces;  // back to back in the segment, in this order
  uint64_t bytes = 0;
};

// The parts of an extent that the store does not hold yet, in file order.
using UnplacedParts = std::function<std::vector<Extent>(const Extent&)>;

// Packs each group into segments of at most `segment_size` bytes, a group starting a segment
// of its own. Only the unplaced parts of each extent are packed, once each even if extents
// overlap. A part longer than a segment is left out (one request reads it sequentially
// already), and so is a group left with fewer than two parts.
std::vector<SegmentPlan> PackGroups(const std::vector<std::vector<Extent>>& groups,
                                    uint64_t segment_size, const UnplacedParts& unplaced);

}  // namespace segstore
}  // namespace stagio
