#include "segstore/strong_components.h"

#include <algorithm>
#include <limits>

namespace stagio {
namespace segstore {

std::vector<std::vector<size_t>> StrongComponents(
    const std::vector<std::vector<size_t>>& edges) {
  constexpr size_t kUnvisited = std::numeric_limits<size_t>::max();
  const size_t count = edges.size();
  std::vector<size_t> index(count, kUnvisited);
  std::vector<size_t> low(count, 0);
  std::vector<bool> on_stack(count, false);
  std::vector<size_t> stack;
  std::vector<std::vector<size_t>> components;
  size_t next_index = 0;

  // The depth-first search's own stack: a node and how many of its edges it has followed.
  struct Frame {
    size_t node;
    size_t next_edge;
  };
  std::vector<Frame> frames;
  for (size_t root = 0; root < count; ++root) {
    if (index[root] != kUnvisited) continue;
    frames.push_back(Frame{root, 0});
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!frames.empty()) {
      Frame& frame = frames.back();
      const size_t node = frame.node;
      if (frame.next_edge < edges[node].size()) {
        const size_t target = edges[node][frame.next_edge++];
        if (target >= count) continue;
        if (index[target] == kUnvisited) {
          index[target] = low[target] = next_index++;
          stack.push_back(target);
          on_stack[target] = true;
          frames.push_back(Frame{target, 0});  // `frame` is not used after this
        } else if (on_stack[target]) {
          low[node] = std::min(low[node], index[target]);
        }
        continue;
      }
      // Every edge of `node` followed: it closes a component if nothing below reached above it.
      if (low[node] == index[node]) {
        std::vector<size_t> component;
        size_t member;
        do {
          member = stack.back();
          stack.pop_back();
          on_stack[member] = false;
          component.push_back(member);
        } while (member != node);
        std::sort(component.begin(), component.end());
        components.push_back(std::move(component));
      }
      frames.pop_back();
      if (!frames.empty()) {
        const size_t parent = frames.back().node;
        low[parent] = std::min(low[parent], low[node]);
      }
    }
  }
  return components;
}

}  // namespace segstore
}  // namespace stagio
