#include "collective/aggregators.h"

#include <algorithm>
#include <map>

#include "common/config.h"

namespace stagio {

namespace {

// Ranks in node-major rounds: every node's first rank, then every node's second, ...
std::vector<int> SpreadOverNodes(const std::vector<int>& node_of_rank) {
  std::map<int, std::vector<int>> ranks_of_node;  // ordered by node id: deterministic
  for (int rank = 0; rank < static_cast<int>(node_of_rank.size()); ++rank) {
    ranks_of_node[node_of_rank[rank]].push_back(rank);
  }
  std::vector<int> order;
  for (size_t round = 0; order.size() < node_of_rank.size(); ++round) {
    for (const auto& [node, ranks] : ranks_of_node) {
      if (round < ranks.size()) order.push_back(ranks[round]);
    }
  }
  return order;
}

size_t NodeCount(const std::vector<int>& node_of_rank) {
  std::vector<int> nodes = node_of_rank;
  std::sort(nodes.begin(), nodes.end());
  return static_cast<size_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

}  // namespace

std::vector<int> ChooseAggregators(const std::string& spec, const std::vector<int>& node_of_rank,
                                   std::vector<std::string>* warnings) {
  const int ranks = static_cast<int>(node_of_rank.size());
  const std::vector<int> spread = SpreadOverNodes(node_of_rank);
  const size_t one_per_node = NodeCount(node_of_rank);
  AggregatorSpec parsed;
  if (!ParseAggregatorSpec(spec, &parsed)) {
    warnings->push_back("stagio_aggregators '" + spec + "' is malformed; using one per node");
    parsed = AggregatorSpec{};
  }
  if (parsed.automatic) return {spread.begin(), spread.begin() + one_per_node};
  if (parsed.count > 0) {
    size_t count = static_cast<size_t>(parsed.count);
    if (count > spread.size()) {
      warnings->push_back("stagio_aggregators " + spec + " exceeds the " +
                          std::to_string(ranks) + " ranks of the file; using all of them");
      count = spread.size();
    }
    return {spread.begin(), spread.begin() + count};
  }
  for (int rank : parsed.ranks) {
    if (rank >= ranks) {
      warnings->push_back("stagio_aggregators lists rank " + std::to_string(rank) +
                          ", but the file has " + std::to_string(ranks) +
                          " ranks; using one per node");
      return {spread.begin(), spread.begin() + one_per_node};
    }
  }
  return parsed.ranks;
}

std::vector<int> NodeOfEachRank(MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  MPI_Comm node_comm = MPI_COMM_NULL;
  PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm);
  // The node's id is its lowest rank in `comm`.
  int node = rank;
  PMPI_Allreduce(MPI_IN_PLACE, &node, 1, MPI_INT, MPI_MIN, node_comm);
  PMPI_Comm_free(&node_comm);
  std::vector<int> node_of_rank(static_cast<size_t>(size));
  PMPI_Allgather(&node, 1, MPI_INT, node_of_rank.data(), 1, MPI_INT, comm);
  return node_of_rank;
}

}  // namespace stagio
