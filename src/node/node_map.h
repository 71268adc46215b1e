// NodeMap: which ranks of the job share a node, learnt once when MPI starts.
//
// Why. A node cache needs, at every open, the ranks of the file's communicator that can share
// memory with this one. Asking MPI (MPI_Comm_split_type, then an MPI-3 shared window) costs
// several collectives per open: under MPICH with more ranks than cores, where a waiting rank
// polls, that was 120 to 170 ms per open, more than plain MPI-IO's whole open. Here the job
// learns its nodes once, with one allgather at MPI_Init, and a file's node-mates come from a
// local translation of its communicator's group.
//
// What a node is. Ranks are on one node when they see the same /dev/shm: the same kernel (its
// boot id) and the same mount of it (its device number). That is exactly who can share a
// POSIX shared-memory segment, which is what the node cache uses. Tests and benchmarks cut
// each node into pretend nodes of `pretend_node_size` consecutive ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stagio {

// What one rank tells the others at MPI_Init.
struct NodeKey {
  uint64_t kernel = 0;  // a hash of the boot id
  uint64_t shm_device = 0;  // st_dev of /dev/shm
  uint64_t nonce = 0;  // random; rank 0's names the job's shared-memory segments
};

// The ranks of a file's communicator on the calling rank's node.
struct NodeMates {
  std::vector<int> comm_ranks;  // ranks in the file's communicator, ascending
  int leader_world_rank = 0;  // the world rank of the first of them
  bool is_leader = false;  // the calling rank is the first
};

class NodeMap {
 public:
  // Collective over MPI_COMM_WORLD: one allgather.
  static NodeMap Learn(int pretend_node_size);
  // The map for the keys of every world rank, seen from `world_rank` (Learn's pure part).
  NodeMap(const std::vector<NodeKey>& keys, int world_rank, int pretend_node_size);

  // The node of a world rank: the lowest world rank on it.
  int node_of(int world_rank) const { return node_of_world_rank_[world_rank]; }
  int world_size() const { return static_cast<int>(node_of_world_rank_.size()); }
  // Names this job's shared-memory segments apart from other jobs' on the same machine.
  const std::string& job_tag() const { return job_tag_; }

  // Local. The ranks of `comm` on this rank's node; none if some rank of `comm` is not in
  // this job's MPI_COMM_WORLD (a communicator that reaches spawned or connected processes).
  std::optional<NodeMates> MatesIn(MPI_Comm comm) const;
  // The same, for a communicator whose ranks are these world ranks (MatesIn's pure part).
  NodeMates MatesAmong(const std::vector<int>& world_rank_of_comm_rank) const;
  // Local. The node of every rank of `comm` (node_of its world rank); none as for MatesIn.
  std::optional<std::vector<int>> NodesIn(MPI_Comm comm) const;

 private:
  std::vector<int> node_of_world_rank_;
  int world_rank_ = 0;
  std::string job_tag_;
};

// This process's key: its kernel, its /dev/shm and a fresh random nonce.
NodeKey LocalNodeKey();

}  // namespace stagio
