#include "segstore/grouping.h"

#include <algorithm>

#include "segstore/lookup_table.h"
#include "segstore/strong_components.h"

namespace stagio {
namespace segstore {

std::vector<std::vector<Extent>> FindGroups(const std::vector<AccessGraph::Node>& nodes,
                                            uint64_t read_after) {
  std::vector<std::vector<size_t>> edges(nodes.size());
  for (size_t from = 0; from < nodes.size(); ++from) {
    if (nodes[from].last_read <= read_after) continue;
    for (size_t to : nodes[from].related) {
      if (to >= nodes.size() || nodes[to].last_read <= read_after) continue;
      edges[from].push_back(to);
      edges[to].push_back(from);
    }
  }
  std::vector<std::vector<size_t>> components = StrongComponents(edges);
  const auto by_access = [&](size_t a, size_t b) {
    return nodes[a].last_read < nodes[b].last_read;
  };
  for (auto& component : components) std::sort(component.begin(), component.end(), by_access);
  std::sort(components.begin(), components.end(),
            [&](const std::vector<size_t>& a, const std::vector<size_t>& b) {
              return by_access(a.front(), b.front());
            });
  std::vector<std::vector<Extent>> groups;
  for (const auto& component : components) {
    if (component.size() < 2) continue;
    std::vector<Extent> group;
    for (size_t node : component) group.push_back(nodes[node].extent);
    groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<SegmentPlan> PackGroups(const std::vector<std::vector<Extent>>& groups,
                                    uint64_t segment_size, const UnplacedParts& unplaced) {
  std::vector<SegmentPlan> plans;
  LookupTable packed;  // what this packing placed already, so overlaps are packed once
  for (const auto& group : groups) {
    std::vector<Extent> parts;
    for (const Extent& extent : group) {
      for (const Extent& part : unplaced(extent)) {
        for (const Extent& left : packed.UnplacedParts(part)) {
          if (left.length > segment_size) continue;
          parts.push_back(left);
          packed.Insert(left.file, left.offset, left.length, Placement{});
        }
      }
    }
    if (parts.size() < 2) continue;
    SegmentPlan plan;
    for (const Extent& part : parts) {
      if (plan.bytes + part.length > segment_size) {
        plans.push_back(std::move(plan));
        plan = SegmentPlan();
      }
      plan.pieces.push_back(part);
      plan.bytes += part.length;
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace segstore
}  // namespace stagio
