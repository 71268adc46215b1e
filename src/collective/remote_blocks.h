// The requesting side of the block service (block_protocol.h, block_server.h): how a rank reads,
// writes, prefetches and flushes blocks that other ranks own in collective-cache mode.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <list>
#include <map>
#include <vector>

#include "cache/block_cache.h"
#include "cache/block_map.h"
#include "common/function_ref.h"
#include "common/stats.h"
#include "common/status.h"
#include "collective/block_protocol.h"

namespace stagio {

// One request to an owner and the owner's reply, in flight. The reply's receive is posted
// before the request goes, so the owner's reply never waits for this rank to post it.
class OwnerExchange {
 public:
  OwnerExchange() = default;
  OwnerExchange(const OwnerExchange&) = delete;
  OwnerExchange& operator=(const OwnerExchange&) = delete;
  ~OwnerExchange();  // waits for anything still in flight

  // `reply_data_bytes`: the data a successful reply carries (a read's bytes; 0 otherwise).
  void Start(MPI_Comm comm, int owner, BlockOp op, bool whole_blocks,
             const std::vector<WirePiece>& pieces, const std::vector<char>& payload,
             uint64_t reply_data_bytes);
  // Waits for the reply and returns the owner's answer.
  Status Finish();
  // The reply's data, valid after a successful Finish.
  const char* reply_data() const;

 private:
  int owner_ = 0;
  std::vector<char> request_;
  std::vector<char> reply_;
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};  // send, receive
};

// The remote block pieces of one access, one request per owner. Start sends them all, so the
// owners work while the caller serves its own pieces; Finish collects the answers.
class RemotePieces {
 public:
  using Deliver = FunctionRef<void(uint64_t destination, uint64_t length, const char* bytes)>;

  RemotePieces(MPI_Comm comm, FileStats* stats) : comm_(comm), stats_(stats) {}
  RemotePieces(const RemotePieces&) = delete;
  RemotePieces& operator=(const RemotePieces&) = delete;

  // A piece to read; its bytes go to `destination` (the caller's choice of address or offset).
  void AddRead(int owner, const BlockPiece& piece, uint64_t destination);
  // A piece to write, with its bytes (copied).
  void AddWrite(int owner, const BlockPiece& piece, const char* bytes);
  bool empty() const { return batches_.empty(); }

  // `op` is kRead or kWrite, as the pieces were added; `scope` is what a read's misses fetch.
  void Start(BlockOp op, FetchScope scope);
  // Waits for every reply and, for reads, hands each piece's bytes to `deliver` in the order
  // the pieces were added per owner. Returns the first failure.
  Status Finish(Deliver deliver);

 private:
  struct Batch {
    std::vector<WirePiece> pieces;
    std::vector<uint64_t> destinations;  // reads
    std::vector<char> payload;           // writes
    OwnerExchange exchange;
  };

  MPI_Comm comm_;
  FileStats* stats_;
  std::map<int, Batch> batches_;  // by owner
};

// Asks every rank in `owners` except `self` to write back the file's dirty blocks (and, with
// `drop`, to drop its clean ones), and waits for all of them. Returns the first failure.
Status FlushRemoteOwners(MPI_Comm comm, const std::vector<int>& owners, int self, bool drop);

// Prefetch hints to owners: fire and forget, but never lost in the machinery. Each is sent with
// MPI_Issend, which completes once the owner's server has taken it, so that waiting for all of
// them (at sync and close) means no hint is left in flight when the file's communicator goes.
class PrefetchHints {
 public:
  ~PrefetchHints() { WaitAll(); }
  void Send(MPI_Comm comm, int owner, const std::vector<uint64_t>& blocks);
  void WaitAll();

 private:
  void ReapCompleted();
  struct Pending {
    std::vector<char> message;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<Pending> pending_;
};

// A reply tag no other request of this process uses at the same time (block_protocol.h).
int NextReplyTag();

}  // namespace stagio
