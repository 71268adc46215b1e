// File domains of a two-phase collective call (seed 000, Fig. 3, steps 1-2).
//
// Every rank knows every rank's file extents for the call. Cut into block pieces, each piece
// belongs to the aggregator that owns its block (BlockOwners), so an aggregator's file domain
// is the set of touched blocks it owns: no domain boundary ever splits a block, and no two
// aggregators ever hold the same block. The touched blocks are walked in rounds of
// `blocks_per_round` consecutive block indices, which bounds what one exchange moves.
//
// Pure functions: two_phase.cc does the MPI around them, and tests can check the partitioning
// without MPI.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "cache/block_map.h"
#include "cache/block_owners.h"
#include "mpiio/flatten.h"

namespace stagio {

// A block piece of one rank's access, and where it sits in that rank's stream for the call.
struct DomainPiece {
  BlockPiece block;
  uint64_t stream_offset;
};

// What one exchange round moves, as one rank sees it.
struct ExchangeRound {
  std::vector<std::vector<DomainPiece>> to_owner;   // [owner rank]: my pieces it owns
  std::vector<std::vector<DomainPiece>> from_rank;  // [rank]: that rank's pieces I own
};

// Consecutive block indices per round: `per_aggregator_bytes` of blocks for each aggregator,
// at least one block, and at most `max_round_bytes` of blocks.
uint64_t BlocksPerRound(uint64_t block_size, uint64_t aggregators, uint64_t per_aggregator_bytes,
                        uint64_t max_round_bytes);

// Cuts every rank's extents (all[r], in rank r's stream order) into block pieces and sorts
// those of `my_rank`, and those it owns, into rounds keyed by first block index /
// blocks_per_round. Every rank gets the same keys, whether or not it moves anything in a
// round, so that all take part in every exchange. Within a list, pieces keep stream order.
std::map<uint64_t, ExchangeRound> PlanRounds(const std::vector<std::vector<Extent>>& all,
                                             int my_rank, const BlockOwners& owners,
                                             uint64_t block_size, uint64_t blocks_per_round);

// The distinct blocks of the pieces, sorted.
std::vector<uint64_t> DistinctBlocks(const std::vector<std::vector<DomainPiece>>& pieces_by_rank);

}  // namespace stagio
