// The strongly connected components of a directed graph (Tarjan's algorithm), iterative so
// that a long chain of extents cannot overflow the stack.
#pragma once

#include <cstddef>
#include <vector>

namespace stagio {
namespace segstore {

// `edges[v]` lists the nodes v points to. Returns every node in exactly one component; each
// component lists its nodes in ascending order, components in no particular order.
std::vector<std::vector<size_t>> StrongComponents(const std::vector<std::vector<size_t>>& edges);

}  // namespace segstore
}  // namespace stagio
