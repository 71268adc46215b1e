// Aggregators: the ranks of a file's communicator that own cache blocks and serve collective
// I/O (seed 000's prefetch delegates, seed 004's aggregators).
//
// stagio_aggregators says which: "auto" is one per node (the node's lowest rank), the default
// of ROMIO's cb_nodes and the choice that spreads the cache and the storage traffic over every
// node's memory and links. A count N takes the first rank of each node, then the second of
// each, and so on, until N are chosen. A list names the ranks. Counts above the number of
// ranks and ranks outside the communicator get a warning and fall back to a valid choice.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace stagio {

// node_of_rank[r] is the node of rank r (any ids; equal ids mean the same node). Returns the
// aggregators in dealing order (BlockOwners), never empty for a non-empty communicator.
std::vector<int> ChooseAggregators(const std::string& spec, const std::vector<int>& node_of_rank,
                                   std::vector<std::string>* warnings);

// Collective over `comm`: the node of every rank, as the lowest rank of `comm` on that node.
std::vector<int> NodeOfEachRank(MPI_Comm comm);

}  // namespace stagio
