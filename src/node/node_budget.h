// NodeBudget: one memory budget for every node-cache table of a node.
//
// Why. Each file that several ranks of a node open gets its own table, as large as the node's
// ranks' budgets together, and a table takes memory pages only as its frames are first filled.
// With several such files open at once the node could still hold that much once per file.
// The budget is one account per job and node, in a small shared-memory object of its own,
// which every table of the node charges when it first fills a frame and credits when it gives
// a frame's pages back or goes away.
//
// The rule. A table may fill a new frame while the node's tables together hold less than the
// limit (one table's capacity: the node's budgets together), or while the table itself holds
// less than its fair share of the limit (the limit over the tables open on the node), so that
// a file opened after another one filled the node always gets its share. A table that holds
// more than its share while the node holds more than the limit gives a frame's pages back for
// each block it evicts, so the node returns to the limit as its busy tables work. An idle
// table keeps what it holds until it is used again or closed.
//
// Who charges and credits. Every process charges the frames it fills for a table the node's
// first rank made with a budget; the last process to let go of a table credits whatever is
// still charged for it (NodeBlockTable::RemoveView), so the books balance whichever ranks
// filled the frames and in whatever order they closed.
//
// Limits. The limit is the capacity of the table that asks: tables of one node made with
// different stagio_cache_size values see different limits. The fair share is checked against
// what the table held when the check began, so ranks filling different shards at once may
// take it over by a few frames.
//
// Lifetime. The first process of the node to need the account makes it (any process may:
// creating is idempotent and a new object reads as zeros; its page is allocated before it is
// touched, so a full /dev/shm is an error, not a crash). The last to let go marks it as going
// and removes its name; a process that finds it going waits for the name to go and makes a new
// one, so no two processes of a node ever keep separate books under one name. A process that
// crashes leaves the name behind, as it leaves its node segments.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace stagio {

// The account itself, in memory every process of the node maps. All zeros is a new account.
struct NodeBudgetState {
  std::atomic<uint64_t> held_bytes;  // the pages the node's tables hold, in frames
  std::atomic<uint32_t> tables;      // tables open on the node
  std::atomic<uint32_t> users;       // processes that map the account
};

class NodeBudget {
 public:
  // The shared-memory name of a job's account on a node (NodeMap::node_of's number).
  static std::string NameFor(const std::string& job_tag, int node);
  // This process's view of the named account, made if no process of the node has made it.
  // Null, with the reason, if the shared memory cannot be had.
  static std::shared_ptr<NodeBudget> Attach(const std::string& name, Status* status);
  // An account in memory the caller shares and keeps (zeros when new): tests.
  explicit NodeBudget(NodeBudgetState* state);
  ~NodeBudget();
  NodeBudget(const NodeBudget&) = delete;
  NodeBudget& operator=(const NodeBudget&) = delete;

  // A table of the node was made / went away holding `held_bytes`.
  void TableOpened();
  void TableClosed(uint64_t held_bytes);

  // Charges `bytes` for a table that holds `table_held` when the node may hold `limit`, if the
  // rule allows it. False, charging nothing, if it does not.
  bool TryTake(uint64_t bytes, uint64_t limit, uint64_t table_held);
  // Credits `bytes` given back.
  void Give(uint64_t bytes);
  // True if a table that holds `table_held` should give pages back.
  bool ShouldGiveBack(uint64_t limit, uint64_t table_held) const;

  uint64_t held_bytes() const { return state_->held_bytes.load(); }
  uint32_t tables() const { return state_->tables.load(); }

 private:
  NodeBudget(NodeBudgetState* state, std::string name, size_t mapped_bytes);
  uint64_t FairShare(uint64_t limit) const;

  NodeBudgetState* state_;
  std::string name_;      // empty for an account the caller keeps
  size_t mapped_bytes_ = 0;
};

}  // namespace stagio
