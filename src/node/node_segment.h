// NodeSegment: the shared memory of one file's node cache, among the ranks of the file's
// communicator that share a node (NodeMap says which).
//
// The memory is a POSIX shared-memory object. Making it costs no collective: the node's first
// rank (the leader) creates it under a name every node-mate can work out, lays out the table
// and opens a door at its front; the others wait for the door and map it. An MPI-3 shared
// window did the same with four collectives, which under MPICH's polling cost more than the
// application's whole open.
//
// The name lives only until every node-mate has mapped the object: the last to attach removes
// it, and the leader removes it at the latest when the segment goes. A job killed between the
// leader's creation and the last attach leaves the object behind in /dev/shm, named
// stagio.<job>.<rank>.<serial>.<nonce>.
//
// Every step is local and bounded: a leader that cannot make the segment leaves a door that
// says so, which its node-mates see at once, and a node-mate that finds no door within the
// attach timeout gives up. A name that exists already is someone else's and is left alone. Either way
// that rank gets null and caches on its own, which MPI's consistency rules allow (across nodes
// the open then gives every rank a home of its own, so that no block has two).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "node/node_block_table.h"
#include "node/node_budget.h"

namespace stagio {

class NodeSegment {
 public:
  struct Place {
    std::string name;    // of the shared-memory object (NameFor)
    bool is_leader = false;  // this rank creates it (unless first_comer_makes)
    // Whichever rank of the node comes first makes it and the others attach (LazyNodeStore,
    // which makes it when a rank first needs it, not at open): is_leader is not looked at,
    // and a name that exists already is a node-mate's.
    bool first_comer_makes = false;
    int node_size = 1;   // ranks that map it, the leader included
    // The node's memory account its table charges (null: the table is bounded by its size).
    std::shared_ptr<NodeBudget> budget;
  };
  // The object's name for a job, the world rank of its leader, a serial number that this
  // leader never reused, and a random number the file's ranks agreed on (two opens on two
  // threads may agree on the same serial; they never share a table).
  static std::string NameFor(const std::string& job_tag, int leader_world_rank, uint64_t serial,
                             uint64_t nonce);

  // A table of frames of `block_size` bytes, as many as `ranks` ranks' `bytes_per_rank`
  // together hold (at least one per rank, at most 2^30), charged to a node budget or not.
  static NodeBlockTable::Layout LayoutFor(uint64_t block_size, uint64_t bytes_per_rank,
                                          int ranks, bool budgeted);

  // The table is LayoutFor the node's ranks (Place::node_size). Null, with the reason in *status, if this rank
  // cannot use the node's segment. *created_name says whether this rank made the name (a
  // maker that failed leaves a door that says so, under its name, for the node-mates).
  static std::unique_ptr<NodeSegment> Create(
      const Place& place, uint64_t block_size, uint64_t bytes_per_rank, Status* status,
      std::chrono::milliseconds attach_timeout = std::chrono::seconds(10),
      bool* created_name = nullptr);
  // Attaches to the segment a node-mate made, if its name is there; makes nothing. Null with
  // *status OK if the name is not there; null with the reason if it cannot be used.
  static std::unique_ptr<NodeSegment> AttachIfThere(
      const Place& place, Status* status,
      std::chrono::milliseconds attach_timeout = std::chrono::seconds(10));
  // Unmaps this rank's view; the node-mates keep theirs.
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  NodeBlockTable& table() { return table_; }
  int node_size() const { return node_size_; }
  // This rank made the segment (and removes its name when its view goes).
  bool made_it() const { return made_it_; }

 private:
  NodeSegment(const Place& place, bool made_it, void* mapping, size_t mapped_bytes,
              void* table_memory);

  std::string name_;
  bool made_it_;
  int node_size_;
  void* mapping_;
  size_t mapped_bytes_;
  NodeBlockTable table_;
  std::shared_ptr<NodeBudget> budget_;
};

}  // namespace stagio
