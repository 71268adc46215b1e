#include "collective/file_domains.h"

#include <algorithm>

namespace stagio {

uint64_t BlocksPerRound(uint64_t block_size, uint64_t aggregators, uint64_t per_aggregator_bytes,
                        uint64_t max_round_bytes) {
  const uint64_t per_aggregator = std::max<uint64_t>(1, per_aggregator_bytes / block_size);
  const uint64_t cap = std::max<uint64_t>(1, max_round_bytes / block_size);
  return std::min(per_aggregator * std::max<uint64_t>(1, aggregators), cap);
}

std::map<uint64_t, ExchangeRound> PlanRounds(const std::vector<std::vector<Extent>>& all,
                                             int my_rank, const BlockOwners& owners,
                                             uint64_t block_size, uint64_t blocks_per_round) {
  const BlockMap map(block_size);
  const size_t ranks = all.size();
  std::map<uint64_t, ExchangeRound> rounds;
  for (size_t rank = 0; rank < ranks; ++rank) {
    uint64_t stream_offset = 0;
    for (const Extent& extent : all[rank]) {
      map.ForEachPiece(static_cast<uint64_t>(extent.offset), extent.length,
                       [&](const BlockPiece& piece) {
                         ExchangeRound& round = rounds[piece.index / blocks_per_round];
                         if (round.to_owner.empty()) {
                           round.to_owner.resize(ranks);
                           round.from_rank.resize(ranks);
                         }
                         const int owner = owners.OwnerOf(piece.index);
                         if (static_cast<int>(rank) == my_rank) {
                           round.to_owner[owner].push_back(DomainPiece{piece, stream_offset});
                         }
                         if (owner == my_rank) {
                           round.from_rank[rank].push_back(DomainPiece{piece, stream_offset});
                         }
                         stream_offset += piece.length;
                         return true;
                       });
    }
  }
  return rounds;
}

std::vector<uint64_t> DistinctBlocks(const std::vector<std::vector<DomainPiece>>& pieces_by_rank) {
  std::vector<uint64_t> blocks;
  for (const std::vector<DomainPiece>& pieces : pieces_by_rank) {
    for (const DomainPiece& piece : pieces) blocks.push_back(piece.block.index);
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

}  // namespace stagio
