// File domains of two-phase collective calls: how every rank's extents are cut into block
// pieces, dealt to the blocks' owners and walked in bounded rounds (file_domains.h).
//
// The central property is that sender and receiver agree: the pieces rank r plans to send to
// owner o in a round are exactly the pieces o plans to receive from r, in the same order. A
// disagreement would hang or corrupt the Alltoallv, so it is checked on random extents too.
#include "collective/file_domains.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <vector>

#include "support/block_piece_compare.h"

namespace stagio {

// In namespace stagio, beside DomainPiece, for EXPECT_EQ and gtest's printer.
inline bool operator==(const DomainPiece& a, const DomainPiece& b) {
  return a.block == b.block && a.stream_offset == b.stream_offset;
}
inline std::ostream& operator<<(std::ostream& out, const DomainPiece& piece) {
  return out << piece.block << "@" << piece.stream_offset;
}

namespace {

using Pieces = std::vector<DomainPiece>;
using Extents = std::vector<Extent>;
using Rounds = std::map<uint64_t, ExchangeRound>;

constexpr uint64_t kB = 256;  // block size of most tests: small numbers, same arithmetic
constexpr uint64_t kManyBlocks = 1000;

DomainPiece Piece(uint64_t index, uint64_t offset_in_block, uint64_t length,
                  uint64_t stream_offset) {
  return DomainPiece{BlockPiece{index, offset_in_block, length}, stream_offset};
}

std::set<uint64_t> KeysOf(const Rounds& rounds) {
  std::set<uint64_t> keys;
  for (const auto& [key, round] : rounds) keys.insert(key);
  return keys;
}

// ---- BlocksPerRound

TEST(BlocksPerRoundTest, EachAggregatorGetsItsBufferOfBlocks) {
  EXPECT_EQ(BlocksPerRound(4096, 1, 16 * 1024, 1 << 30), 4u);
  EXPECT_EQ(BlocksPerRound(4096, 3, 16 * 1024, 1 << 30), 12u);
  EXPECT_EQ(BlocksPerRound(4096, 3, 16 * 1024 + 4095, 1 << 30), 12u) << "whole blocks only";
}

TEST(BlocksPerRoundTest, AtLeastOneBlockPerAggregatorAndPerRound) {
  EXPECT_EQ(BlocksPerRound(1 << 20, 2, 512, 1 << 30), 2u) << "buffer smaller than a block";
  EXPECT_EQ(BlocksPerRound(4096, 0, 16 * 1024, 1 << 30), 4u) << "no aggregators counts as one";
  EXPECT_EQ(BlocksPerRound(1 << 20, 4, 1 << 20, 512), 1u) << "cap smaller than a block";
}

TEST(BlocksPerRoundTest, TheRoundCapBoundsManyAggregators) {
  EXPECT_EQ(BlocksPerRound(4096, 64, 1 << 20, 1 << 20), 256u);
  EXPECT_EQ(BlocksPerRound(4096, 2, 1 << 20, 3 * 4096 + 1), 3u);
}

// ---- PlanRounds: cutting, offsets, owners

TEST(PlanRoundsTest, PiecesSplitAtBlockBoundariesAndCarryTheirStreamOffsets) {
  // One rank and one aggregator: every piece goes to itself, both ways.
  const std::vector<Extents> all{{{100, 300}, {3 * kB + 232, 50}}};
  const Rounds rounds = PlanRounds(all, 0, BlockOwners({0}), kB, kManyBlocks);
  ASSERT_EQ(KeysOf(rounds), (std::set<uint64_t>{0}));
  const Pieces expected{Piece(0, 100, 156, 0), Piece(1, 0, 144, 156), Piece(3, 232, 24, 300),
                        Piece(4, 0, 26, 324)};
  EXPECT_EQ(rounds.at(0).to_owner.at(0), expected);
  EXPECT_EQ(rounds.at(0).from_rank.at(0), expected);
}

TEST(PlanRoundsTest, PiecesKeepStreamOrderWhenTheExtentsGoBackwards) {
  // A memory-order stream may visit later blocks first; the exchange packs in stream order.
  const std::vector<Extents> all{{{5 * kB, kB}, {kB + 10, 20}}};
  const Rounds rounds = PlanRounds(all, 0, BlockOwners({0}), kB, kManyBlocks);
  EXPECT_EQ(rounds.at(0).to_owner.at(0), (Pieces{Piece(5, 0, kB, 0), Piece(1, 10, 20, kB)}));
}

TEST(PlanRoundsTest, BlocksGoToTheirOwnersRoundRobin) {
  // Rank 0 touches blocks 0-4; aggregators in dealing order 1, 0.
  const std::vector<Extents> all{{{0, 5 * kB}}, {}};
  const BlockOwners owners({1, 0});
  const Rounds at_rank0 = PlanRounds(all, 0, owners, kB, kManyBlocks);
  const Rounds at_rank1 = PlanRounds(all, 1, owners, kB, kManyBlocks);
  const Pieces to_rank1{Piece(0, 0, kB, 0), Piece(2, 0, kB, 2 * kB), Piece(4, 0, kB, 4 * kB)};
  const Pieces to_rank0{Piece(1, 0, kB, kB), Piece(3, 0, kB, 3 * kB)};
  EXPECT_EQ(at_rank0.at(0).to_owner.at(1), to_rank1);
  EXPECT_EQ(at_rank0.at(0).to_owner.at(0), to_rank0);
  EXPECT_EQ(at_rank0.at(0).from_rank.at(0), to_rank0) << "rank 0 owns its odd blocks";
  EXPECT_EQ(at_rank1.at(0).from_rank.at(0), to_rank1);
  EXPECT_TRUE(at_rank1.at(0).to_owner.at(0).empty()) << "rank 1 has nothing to send";
  EXPECT_TRUE(at_rank1.at(0).to_owner.at(1).empty());
}

TEST(PlanRoundsTest, OneAggregatorReceivesEveryPiece) {
  const std::vector<Extents> all{{{0, 3 * kB}}, {{3 * kB, 2 * kB}}, {{10 * kB, 1}}};
  const BlockOwners owners({2});
  for (int rank = 0; rank < 3; ++rank) {
    const Rounds rounds = PlanRounds(all, rank, owners, kB, kManyBlocks);
    const ExchangeRound& round = rounds.at(0);
    for (int owner = 0; owner < 2; ++owner) {
      EXPECT_TRUE(round.to_owner.at(owner).empty()) << "rank " << rank << " to " << owner;
    }
    for (int sender = 0; sender < 3; ++sender) {
      EXPECT_EQ(round.from_rank.at(sender).empty(), rank != 2)
          << "only the aggregator receives; rank " << rank << " from " << sender;
    }
  }
  const Rounds at_aggregator = PlanRounds(all, 2, owners, kB, kManyBlocks);
  EXPECT_EQ(DistinctBlocks(at_aggregator.at(0).from_rank),
            (std::vector<uint64_t>{0, 1, 2, 3, 4, 10}));
}

TEST(PlanRoundsTest, SeveralAggregatorsSplitTheBlocksWithoutOverlap) {
  const std::vector<Extents> all{{{0, 7 * kB}}, {{7 * kB, 5 * kB}}, {}, {{20, 30}}};
  const BlockOwners owners({0, 2, 3});
  std::vector<uint64_t> every_domain;
  for (int aggregator : owners.aggregators()) {
    const Rounds rounds = PlanRounds(all, aggregator, owners, kB, kManyBlocks);
    for (uint64_t block : DistinctBlocks(rounds.at(0).from_rank)) {
      EXPECT_EQ(owners.OwnerOf(block), aggregator) << "block " << block;
      every_domain.push_back(block);
    }
  }
  std::sort(every_domain.begin(), every_domain.end());
  std::vector<uint64_t> touched(12);
  for (uint64_t block = 0; block < touched.size(); ++block) touched[block] = block;
  EXPECT_EQ(every_domain, touched) << "every touched block is in exactly one domain";
  const Rounds at_rank1 = PlanRounds(all, 1, owners, kB, kManyBlocks);
  EXPECT_TRUE(DistinctBlocks(at_rank1.at(0).from_rank).empty()) << "rank 1 is no aggregator";
}

// ---- PlanRounds: rounds

TEST(PlanRoundsTest, RoundsHoldConsecutiveBlockIndicesAndSkipUntouchedSpans) {
  // blocks 0-5, then 40-41: with 4 blocks per round, rounds 0, 1 and 10.
  const std::vector<Extents> all{{{0, 6 * kB}}, {{40 * kB, 2 * kB}}};
  const BlockOwners owners({0, 1});
  const Rounds rounds = PlanRounds(all, 0, owners, kB, 4);
  ASSERT_EQ(KeysOf(rounds), (std::set<uint64_t>{0, 1, 10}));
  for (const auto& [key, round] : rounds) {
    for (const Pieces& pieces : round.from_rank) {
      for (const DomainPiece& piece : pieces) {
        EXPECT_EQ(piece.block.index / 4, key) << piece << " in round " << key;
      }
    }
    for (const Pieces& pieces : round.to_owner) {
      for (const DomainPiece& piece : pieces) {
        EXPECT_EQ(piece.block.index / 4, key) << piece << " in round " << key;
      }
    }
  }
  EXPECT_EQ(rounds.at(1).to_owner.at(0), (Pieces{Piece(4, 0, kB, 4 * kB)}));
  EXPECT_EQ(rounds.at(1).to_owner.at(1), (Pieces{Piece(5, 0, kB, 5 * kB)}));
}

TEST(PlanRoundsTest, EveryRankGetsTheSameRoundKeysAndFullSizedLists) {
  // Rank 2 has no extents and rank 1 touches only the last round: all take part in every round.
  const std::vector<Extents> all{{{0, 3 * kB}, {9 * kB, 10}}, {{30 * kB, kB}}, {}};
  const BlockOwners owners({1});
  const std::set<uint64_t> expected{0, 1, 3};
  for (int rank = 0; rank < 3; ++rank) {
    const Rounds rounds = PlanRounds(all, rank, owners, kB, 8);
    EXPECT_EQ(KeysOf(rounds), expected) << "rank " << rank;
    for (const auto& [key, round] : rounds) {
      EXPECT_EQ(round.to_owner.size(), 3u) << "rank " << rank << " round " << key;
      EXPECT_EQ(round.from_rank.size(), 3u) << "rank " << rank << " round " << key;
    }
  }
  const Rounds at_empty_rank = PlanRounds(all, 2, owners, kB, 8);
  for (const auto& [key, round] : at_empty_rank) {
    for (const Pieces& pieces : round.to_owner) EXPECT_TRUE(pieces.empty()) << "round " << key;
    for (const Pieces& pieces : round.from_rank) EXPECT_TRUE(pieces.empty()) << "round " << key;
  }
}

TEST(PlanRoundsTest, NoExtentsAnywhereMeansNoRounds) {
  EXPECT_TRUE(PlanRounds({{}, {}, {}}, 1, BlockOwners({0, 1}), kB, 4).empty());
  EXPECT_TRUE(PlanRounds({{{kB, 0}}, {}}, 0, BlockOwners({0}), kB, 4).empty())
      << "an empty extent touches no block";
}

// Random extents at random ranks: what each rank sends an owner is exactly what that owner
// expects from it, per round, in order; every byte of every rank's stream is sent once.
TEST(PlanRoundsTest, SendersAndOwnersAgreeOnEveryPiece) {
  std::mt19937_64 rng(20261122);
  for (int trial = 0; trial < 200; ++trial) {
    const int ranks = 1 + static_cast<int>(rng() % 5);
    const uint64_t block_size = 1 + rng() % 64;
    std::vector<Extents> all(static_cast<size_t>(ranks));
    for (Extents& extents : all) {
      const int count = static_cast<int>(rng() % 4);
      for (int i = 0; i < count; ++i) {
        extents.push_back(Extent{static_cast<int64_t>(rng() % 2000), rng() % 300});
      }
    }
    std::vector<int> aggregators;
    for (int rank = 0; rank < ranks; ++rank) {
      if (rng() % 2 == 0) aggregators.push_back(rank);
    }
    if (aggregators.empty()) aggregators.push_back(ranks - 1);
    std::shuffle(aggregators.begin(), aggregators.end(), rng);
    const BlockOwners owners(aggregators);
    const uint64_t per_round = 1 + rng() % 8;
    SCOPED_TRACE(testing::Message() << "trial " << trial << ", " << ranks << " ranks, block "
                                    << block_size << ", " << per_round << " blocks per round");

    std::vector<Rounds> plans;
    for (int rank = 0; rank < ranks; ++rank) {
      plans.push_back(PlanRounds(all, rank, owners, block_size, per_round));
    }
    for (int rank = 0; rank < ranks; ++rank) {
      ASSERT_EQ(KeysOf(plans[rank]), KeysOf(plans[0])) << "rank " << rank;
      uint64_t sent = 0;
      for (const auto& [key, round] : plans[rank]) {
        for (int owner = 0; owner < ranks; ++owner) {
          EXPECT_EQ(round.to_owner.at(owner), plans[owner].at(key).from_rank.at(rank))
              << "rank " << rank << " to owner " << owner << " in round " << key;
          for (const DomainPiece& piece : round.to_owner.at(owner)) {
            EXPECT_EQ(owners.OwnerOf(piece.block.index), owner);
            EXPECT_EQ(piece.block.index / per_round, key);
            EXPECT_LE(piece.block.offset_in_block + piece.block.length, block_size);
            sent += piece.block.length;
          }
        }
      }
      uint64_t stream_length = 0;
      for (const Extent& extent : all[rank]) stream_length += extent.length;
      EXPECT_EQ(sent, stream_length) << "rank " << rank << " sends its whole stream";
    }
  }
}

// ---- DistinctBlocks

TEST(DistinctBlocksTest, SortedAndUniqueOverEveryRank) {
  const std::vector<Pieces> pieces{{Piece(7, 0, 1, 0), Piece(2, 5, 1, 1), Piece(7, 9, 1, 2)},
                                   {},
                                   {Piece(2, 0, 1, 0), Piece(0, 0, 3, 1)}};
  EXPECT_EQ(DistinctBlocks(pieces), (std::vector<uint64_t>{0, 2, 7}));
  EXPECT_TRUE(DistinctBlocks({}).empty());
  EXPECT_TRUE(DistinctBlocks({{}, {}}).empty());
}

}  // namespace
}  // namespace stagio
