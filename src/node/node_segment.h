// NodeSegment: the shared memory of one file's node cache, among the ranks of the file's
// communicator that share a node.
//
// The memory is an MPI-3 shared window (MPI_Win_allocate_shared) over the node's communicator
// (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED): MPI finds the node's ranks, maps the memory
// into each, and frees it when the file is closed, on MPICH and Open MPI alike, with no name in
// /dev/shm to clean up after a crash. The node's first rank allocates it all and lays out the
// table; the others map it at their own address.
//
// Tests and benchmarks pretend that one machine is several nodes: with `pretend_node_size` > 0
// the ranks of each real node are cut into groups of that many consecutive ranks, each group
// with its own segment.
#pragma once

#include <mpi.h>

#include <memory>

#include "common/status.h"
#include "node/node_block_table.h"

namespace stagio {

class NodeSegment {
 public:
  // Collective over `comm`. The table has frames of `block_size` bytes, as many as the node's
  // ranks' `bytes_per_rank` together hold (at least one per rank). Null, with the reason in
  // *status, if the ranks of a node could not share the memory; then every rank of that node
  // gets null.
  static std::unique_ptr<NodeSegment> Create(MPI_Comm comm, int pretend_node_size,
                                             uint64_t block_size, uint64_t bytes_per_rank,
                                             Status* status);
  // Collective over the node's ranks: frees the window and the node communicator.
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  NodeBlockTable& table() { return table_; }
  MPI_Comm node_comm() const { return node_comm_; }
  int node_rank() const { return node_rank_; }
  int node_size() const { return node_size_; }

 private:
  NodeSegment(MPI_Comm node_comm, MPI_Win window, void* memory);

  MPI_Comm node_comm_;
  MPI_Win window_;
  NodeBlockTable table_;
  int node_rank_ = 0;
  int node_size_ = 1;
};

}  // namespace stagio
