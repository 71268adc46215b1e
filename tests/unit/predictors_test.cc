#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "prefetch/access_history.h"
#include "prefetch/access_steps.h"
#include "prefetch/markov_predictor.h"
#include "prefetch/nested_strided_predictor.h"
#include "prefetch/predictor_selector.h"
#include "prefetch/sequential_predictor.h"
#include "prefetch/strided_predictor.h"

namespace stagio {
namespace {

using Accesses = std::vector<Access>;

constexpr uint64_t kB = 4096;  // streams are written in blocks of this size

// One block-sized read of block `block`.
Access Block(uint64_t block) { return {block * kB, kB}; }

// `n` block reads starting at block `first`, moving by the block deltas of `cycle` in turn.
Accesses Stream(uint64_t first, const std::vector<int64_t>& cycle, size_t n) {
  Accesses stream;
  uint64_t block = first;
  for (size_t i = 0; i < n; ++i) {
    stream.push_back(Block(block));
    block += cycle[i % cycle.size()];
  }
  return stream;
}

AccessHistory HistoryOf(const Accesses& accesses, size_t window = AccessHistory::kDefaultWindow) {
  AccessHistory history(window);
  for (const Access& access : accesses) history.Record(access);
  return history;
}

Accesses Blocks(std::initializer_list<uint64_t> blocks) {
  Accesses accesses;
  for (uint64_t block : blocks) accesses.push_back(Block(block));
  return accesses;
}

// The (up to) `count` accesses of `stream` after index i.
Accesses Future(const Accesses& stream, size_t i, size_t count) {
  const size_t end = std::min(stream.size(), i + 1 + count);
  return Accesses(stream.begin() + i + 1, stream.begin() + end);
}

// ----- Steps -------------------------------------------------------------------------------

TEST(AccessStepsTest, ShiftOffsetRefusesNegativeAndOverflowingOffsets) {
  EXPECT_EQ(ShiftOffset(100, 5), 105u);
  EXPECT_EQ(ShiftOffset(100, -100), 0u);
  EXPECT_EQ(ShiftOffset(100, -101), std::nullopt);
  EXPECT_EQ(ShiftOffset(0, INT64_MIN), std::nullopt);
  EXPECT_EQ(ShiftOffset(UINT64_MAX - 1, 1), UINT64_MAX);
  EXPECT_EQ(ShiftOffset(UINT64_MAX - 1, 2), std::nullopt);
}

TEST(AccessStepsTest, StepBetweenIsSigned) {
  EXPECT_EQ(StepBetween({100, 10}, {40, 7}), (Step{-60, 7}));
  EXPECT_EQ(StepBetween({40, 7}, {100, 10}), (Step{60, 10}));
}

TEST(AccessStepsTest, RepeatStepsCyclesAndStopsBelowZero) {
  EXPECT_EQ(RepeatSteps({10, 1}, {{5, 2}, {-1, 3}}, 4),
            (Accesses{{15, 2}, {14, 3}, {19, 2}, {18, 3}}));
  EXPECT_EQ(RepeatSteps({10, 1}, {{-4, 1}}, 5), (Accesses{{6, 1}, {2, 1}}));
  EXPECT_TRUE(RepeatSteps({10, 1}, {}, 3).empty());
  EXPECT_TRUE(RepeatSteps({10, 1}, {{1, 1}}, 0).empty());
}

// ----- SequentialPredictor -----------------------------------------------------------------

TEST(SequentialPredictorTest, PredictsTheNextRangesOfTheSameLength) {
  SequentialPredictor sequential;
  EXPECT_STREQ(sequential.name(), "sequential");
  const AccessHistory history = HistoryOf(Blocks({7, 8, 9}));
  EXPECT_EQ(sequential.Predict(history, 1), Blocks({10}));
  EXPECT_EQ(sequential.Predict(history, 4), Blocks({10, 11, 12, 13}));
  EXPECT_TRUE(sequential.Predict(history, 0).empty());
}

TEST(SequentialPredictorTest, OneBackToBackPairIsEnough) {
  SequentialPredictor sequential;
  EXPECT_TRUE(sequential.Predict(HistoryOf({}), 2).empty());
  EXPECT_TRUE(sequential.Predict(HistoryOf(Blocks({7})), 2).empty());
  EXPECT_EQ(sequential.Predict(HistoryOf(Blocks({7, 8})), 2), Blocks({9, 10}));
}

TEST(SequentialPredictorTest, OnlyTheNewestPairCounts) {
  SequentialPredictor sequential;
  EXPECT_TRUE(sequential.Predict(HistoryOf(Blocks({1, 2, 3, 5})), 2).empty());  // gap
  EXPECT_TRUE(sequential.Predict(HistoryOf({{0, 100}, {50, 100}}), 2).empty());  // overlap
  EXPECT_TRUE(sequential.Predict(HistoryOf(Blocks({3, 2})), 2).empty());        // backwards
}

TEST(SequentialPredictorTest, UsesTheNewestLength) {
  SequentialPredictor sequential;
  EXPECT_EQ(sequential.Predict(HistoryOf({{0, 100}, {100, 50}}), 3),
            (Accesses{{150, 50}, {200, 50}, {250, 50}}));
}

// ----- StridedPredictor --------------------------------------------------------------------

TEST(StridedPredictorTest, PositiveStride) {
  StridedPredictor strided;
  EXPECT_STREQ(strided.name(), "strided");
  const AccessHistory history = HistoryOf(Blocks({5, 8, 11}));
  EXPECT_EQ(strided.Predict(history, 1), Blocks({14}));
  EXPECT_EQ(strided.Predict(history, 4), Blocks({14, 17, 20, 23}));
}

TEST(StridedPredictorTest, NegativeStrideStopsAtOffsetZero) {
  StridedPredictor strided;
  const AccessHistory history = HistoryOf(Blocks({10, 8, 6}));
  EXPECT_EQ(strided.Predict(history, 2), Blocks({4, 2}));
  EXPECT_EQ(strided.Predict(history, 10), Blocks({4, 2, 0}));
  // Byte offsets that do not land on 0: the first negative one ends the prediction.
  EXPECT_EQ(strided.Predict(HistoryOf({{250, 10}, {150, 10}, {50, 10}}), 5), Accesses{});
  EXPECT_EQ(strided.Predict(HistoryOf({{350, 10}, {250, 10}, {150, 10}}), 5),
            (Accesses{{50, 10}}));
}

TEST(StridedPredictorTest, ProposesTheNewestDelta) {
  StridedPredictor strided;
  EXPECT_TRUE(strided.Predict(HistoryOf(Blocks({5})), 2).empty());
  EXPECT_EQ(strided.Predict(HistoryOf(Blocks({5, 8})), 2), Blocks({11, 14}));
  EXPECT_EQ(strided.Predict(HistoryOf(Blocks({5, 8, 12})), 2), Blocks({16, 20}));
}

TEST(StridedPredictorTest, ContiguousReadsAreAStrideToo) {
  StridedPredictor strided;
  EXPECT_EQ(strided.Predict(HistoryOf(Blocks({0, 1, 2})), 2), Blocks({3, 4}));
}

TEST(StridedPredictorTest, RereadingTheSameRangeIsNoPattern) {
  StridedPredictor strided;
  EXPECT_TRUE(strided.Predict(HistoryOf(Blocks({4, 4, 4, 4})), 2).empty());
}

TEST(StridedPredictorTest, UsesTheNewestLength) {
  StridedPredictor strided;
  EXPECT_EQ(strided.Predict(HistoryOf({{0, 10}, {1000, 20}, {2000, 30}}), 2),
            (Accesses{{3000, 30}, {4000, 30}}));
}

// ----- NestedStridedPredictor --------------------------------------------------------------

TEST(NestedStridedPredictorTest, PeriodTwo) {
  // Seed 000's (1 MB, 3 MB) stride pair, in blocks: deltas 1, 3, 1, 3, ...
  NestedStridedPredictor nested;
  EXPECT_STREQ(nested.name(), "nested");
  const AccessHistory history = HistoryOf(Blocks({0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(nested.Predict(history, 1), Blocks({12}));
  EXPECT_EQ(nested.Predict(history, 5), Blocks({12, 13, 16, 17, 20}));
}

TEST(NestedStridedPredictorTest, PeriodTwoNeedsFiveRepeatingDeltas) {
  NestedStridedPredictor nested;
  EXPECT_TRUE(nested.Predict(HistoryOf(Blocks({0, 1, 4, 5, 8})), 3).empty());
  EXPECT_TRUE(nested.Predict(HistoryOf(Blocks({0, 1, 4, 5, 8, 10})), 3).empty());
}

TEST(NestedStridedPredictorTest, PeriodThreeFitsTheDefaultWindow) {
  // Rows of three blocks, ten blocks apart: deltas 1, 1, 8.
  NestedStridedPredictor nested;
  const AccessHistory history = HistoryOf(Blocks({0, 1, 2, 10, 11, 12, 20, 21}));
  ASSERT_EQ(history.size(), 8u);
  EXPECT_EQ(nested.Predict(history, 1), Blocks({22}));
  EXPECT_EQ(nested.Predict(history, 5), Blocks({22, 30, 31, 32, 40}));
  // One access fewer is not enough evidence.
  EXPECT_TRUE(nested.Predict(HistoryOf(Blocks({1, 2, 10, 11, 12, 20, 21})), 3).empty());
}

TEST(NestedStridedPredictorTest, ThreeLevelsNeedAWindowOfTen) {
  // Pairs of blocks (delta 1), two pairs per row (delta 4), rows 16 blocks apart (delta 10):
  // deltas 1, 4, 1, 10, period 4.
  const Accesses accesses = Blocks({0, 1, 5, 6, 16, 17, 21, 22, 32, 33});
  NestedStridedPredictor nested;
  EXPECT_TRUE(nested.Predict(HistoryOf(accesses), 4).empty());  // window 8
  EXPECT_EQ(nested.Predict(HistoryOf(accesses, 10), 5), Blocks({37, 38, 48, 49, 53}));
}

TEST(NestedStridedPredictorTest, LengthsFollowThePhase) {
  // A 16-byte header then a 4096-byte body, record after record.
  NestedStridedPredictor nested;
  const AccessHistory history = HistoryOf(
      {{0, 16}, {16, 4096}, {4112, 16}, {4128, 4096}, {8224, 16}, {8240, 4096}});
  EXPECT_EQ(nested.Predict(history, 3), (Accesses{{12336, 16}, {12352, 4096}, {16448, 16}}));
}

TEST(NestedStridedPredictorTest, LengthsMustRepeatToo) {
  NestedStridedPredictor nested;
  const AccessHistory history = HistoryOf(
      {{0, 16}, {16, 4096}, {4112, 16}, {4128, 4096}, {8224, 32}, {8240, 4096}});
  EXPECT_TRUE(nested.Predict(history, 3).empty());
}

TEST(NestedStridedPredictorTest, LeavesPlainStridesToTheStridedPredictor) {
  NestedStridedPredictor nested;
  EXPECT_TRUE(nested.Predict(HistoryOf(Blocks({0, 3, 6, 9, 12, 15, 18, 21})), 3).empty());
  EXPECT_TRUE(nested.Predict(HistoryOf(Blocks({0, 1, 2, 3, 4, 5, 6, 7})), 3).empty());
}

TEST(NestedStridedPredictorTest, NegativeInnerStride) {
  // Each row read backwards: deltas -1, -1, +5.
  NestedStridedPredictor nested;
  const AccessHistory history = HistoryOf(Blocks({2, 1, 0, 5, 4, 3, 8, 7}));
  EXPECT_EQ(nested.Predict(history, 4), Blocks({6, 11, 10, 9}));
}

// ----- MarkovPredictor ---------------------------------------------------------------------

// Records `accesses` one by one, letting `markov` observe each.
void Feed(MarkovPredictor* markov, AccessHistory* history, const Accesses& accesses) {
  for (const Access& access : accesses) {
    history->Record(access);
    markov->Observe(*history);
  }
}

// Feeds `accesses` as a stream of its own (the history starts empty; the table stays).
void FeedAlone(MarkovPredictor* markov, const Accesses& accesses) {
  AccessHistory history;
  Feed(markov, &history, accesses);
}

// Ten distinct block deltas: a cycle the window of 8 cannot show twice.
const std::vector<int64_t> kLongCycle = {5, 17, -3, 40, 9, -12, 23, 2, 31, -7};

TEST(MarkovPredictorTest, LearnsACycleLongerThanTheWindow) {
  const Accesses stream = Stream(1000, kLongCycle, 60);
  MarkovPredictor markov;
  EXPECT_STREQ(markov.name(), "markov");
  AccessHistory history;
  // One pass shows each transition once: not enough.
  Feed(&markov, &history, Accesses(stream.begin(), stream.begin() + 11));
  EXPECT_TRUE(markov.Predict(history, 3).empty());
  // A second pass confirms them; from then on, the chain runs ahead through the whole cycle
  // and around it, where the window-bound predictors cannot follow: no two consecutive deltas
  // of the cycle are equal, so the strided predictor's proposal (the newest delta again) is
  // wrong at every step, and the others see no pattern at all.
  for (size_t i = 11; i < 40; ++i) {
    history.Record(stream[i]);
    markov.Observe(history);
    if (i >= 22) {
      EXPECT_EQ(markov.Predict(history, 1), Future(stream, i, 1)) << "after access " << i;
      EXPECT_EQ(markov.Predict(history, 15), Future(stream, i, 15)) << "after access " << i;
      EXPECT_TRUE(SequentialPredictor().Predict(history, 1).empty()) << "after access " << i;
      EXPECT_TRUE(NestedStridedPredictor().Predict(history, 1).empty()) << "after access " << i;
      const Accesses strided = StridedPredictor().Predict(history, 1);
      ASSERT_EQ(strided.size(), 1u) << "after access " << i;
      EXPECT_NE(strided, Future(stream, i, 1)) << "after access " << i;
    }
  }
}

TEST(MarkovPredictorTest, StopsAtTheFirstUnknownTransition) {
  MarkovPredictor markov;
  for (int pass = 0; pass < 2; ++pass) FeedAlone(&markov, Blocks({0, 10, 30, 60}));
  // 10 -> 20 -> 30 is known; nothing ever followed 30.
  EXPECT_EQ(markov.Predict(HistoryOf(Blocks({100, 110})), 5), Blocks({130, 160}));
  // Nothing ever followed 7.
  EXPECT_TRUE(markov.Predict(HistoryOf(Blocks({100, 107})), 5).empty());
}

TEST(MarkovPredictorTest, TheMostFrequentSuccessorWinsTiesGoToTheMostRecent) {
  MarkovPredictor markov;
  for (int pass = 0; pass < 3; ++pass) FeedAlone(&markov, Blocks({0, 10, 30}));
  for (int pass = 0; pass < 2; ++pass) FeedAlone(&markov, Blocks({0, 10, 60}));
  const AccessHistory history = HistoryOf(Blocks({100, 110}));
  EXPECT_EQ(markov.Predict(history, 1), Blocks({130}));  // 3 against 2
  FeedAlone(&markov, Blocks({0, 10, 60}));
  EXPECT_EQ(markov.Predict(history, 1), Blocks({160}));  // 3 against 3, seen last
}

TEST(MarkovPredictorTest, CountsSaturateSoANewHabitCanTakeOver) {
  MarkovPredictor markov;
  for (int pass = 0; pass < 100; ++pass) FeedAlone(&markov, Blocks({0, 10, 30}));
  for (uint32_t pass = 0; pass < MarkovPredictor::kMaxCount; ++pass) {
    FeedAlone(&markov, Blocks({0, 10, 60}));
  }
  EXPECT_EQ(markov.Predict(HistoryOf(Blocks({100, 110})), 1), Blocks({160}));
}

TEST(MarkovPredictorTest, PredictsTheLengthTheTransitionLedTo) {
  MarkovPredictor markov;
  for (int pass = 0; pass < 2; ++pass) FeedAlone(&markov, {{0, 10}, {100, 10}, {300, 77}});
  EXPECT_EQ(markov.Predict(HistoryOf({{1000, 10}, {1100, 10}}), 1), (Accesses{{1300, 77}}));
}

TEST(MarkovPredictorTest, NeverPredictsANegativeOffset) {
  MarkovPredictor markov;
  for (int pass = 0; pass < 2; ++pass) FeedAlone(&markov, Blocks({200, 210, 110}));
  EXPECT_EQ(markov.Predict(HistoryOf(Blocks({200, 210})), 1), Blocks({110}));
  EXPECT_TRUE(markov.Predict(HistoryOf(Blocks({40, 50})), 1).empty());
}

TEST(MarkovPredictorTest, EvictsTheLeastRecentlySeenDelta) {
  MarkovPredictor markov(/*max_deltas=*/2);
  for (int pass = 0; pass < 2; ++pass) FeedAlone(&markov, Blocks({0, 10, 30}));
  EXPECT_EQ(markov.Predict(HistoryOf(Blocks({0, 10})), 1), Blocks({30}));
  FeedAlone(&markov, Blocks({1000, 1100, 1300, 1600}));  // rows for deltas 100 and 200
  EXPECT_EQ(markov.rows(), 2u);
  EXPECT_TRUE(markov.Predict(HistoryOf(Blocks({0, 10})), 1).empty());
}

TEST(MarkovPredictorTest, TheTableStaysBoundedOnRandomStreams) {
  MarkovPredictor markov;
  AccessHistory history;
  std::mt19937_64 random(7);
  for (int i = 0; i < 5000; ++i) {
    history.Record(Block(random() % (1 << 20)));
    markov.Observe(history);
  }
  EXPECT_EQ(markov.rows(), MarkovPredictor::kDefaultMaxDeltas);
}

TEST(MarkovPredictorTest, ResetForgetsEverything) {
  MarkovPredictor markov;
  for (int pass = 0; pass < 2; ++pass) FeedAlone(&markov, Blocks({0, 10, 30}));
  markov.Reset();
  EXPECT_EQ(markov.rows(), 0u);
  EXPECT_TRUE(markov.Predict(HistoryOf(Blocks({0, 10})), 1).empty());
}

// ----- PredictorSelector -------------------------------------------------------------------

// Feeds the first `fed` accesses of `stream`. From index `first` on, after each access the
// selector must name `expected` and predict exactly the next `count` accesses of the stream.
void ExpectPredictsFrom(PredictorSelector* selector, const Accesses& stream, size_t first,
                        size_t fed, size_t count, const std::string& expected) {
  ASSERT_LE(fed + count, stream.size());
  for (size_t i = 0; i < fed; ++i) {
    selector->Observe(stream[i]);
    if (i < first) continue;
    EXPECT_EQ(selector->current(), expected) << "after access " << i;
    EXPECT_EQ(selector->Predict(1), Future(stream, i, 1)) << "after access " << i;
    EXPECT_EQ(selector->Predict(count), Future(stream, i, count)) << "after access " << i;
  }
}

TEST(PredictorSelectorTest, StartsWithNothing) {
  PredictorSelector selector;
  EXPECT_STREQ(selector.current(), "none");
  EXPECT_TRUE(selector.Predict(4).empty());
  selector.Observe(Block(3));
  EXPECT_STREQ(selector.current(), "none");
  EXPECT_TRUE(selector.Predict(4).empty());
}

// For a `selector` that has observed the first two accesses of `stream`: it predicts nothing
// yet, but after the third access `expected` takes over and predicts `next` (four accesses).
// Then a fresh selector predicts the stream from access 2 to 20, `count` accesses ahead.
void ExpectTakesOverAtTheThirdAccess(PredictorSelector* selector, const Accesses& stream,
                                     const char* expected, const Accesses& next, size_t count) {
  EXPECT_TRUE(selector->Predict(4).empty());
  selector->Observe(stream[2]);
  EXPECT_STREQ(selector->current(), expected);
  EXPECT_EQ(selector->Predict(4), next);

  PredictorSelector fresh;
  ExpectPredictsFrom(&fresh, stream, 2, 20, count, expected);
}

TEST(PredictorSelectorTest, SequentialFromTheThirdAccess) {
  const Accesses stream = Stream(100, {1}, 30);
  PredictorSelector selector;
  selector.Observe(stream[0]);
  selector.Observe(stream[1]);
  // The sequential predictor already guesses, but has not been right yet.
  ExpectTakesOverAtTheThirdAccess(&selector, stream, "sequential", Blocks({103, 104, 105, 106}),
                                  8);
}

TEST(PredictorSelectorTest, StridedForwardFromTheThirdAccess) {
  const Accesses stream = Stream(7, {5}, 30);
  PredictorSelector selector;
  selector.Observe(stream[0]);
  selector.Observe(stream[1]);
  // The strided predictor already proposes the one delta it has seen, but has not been right
  // yet.
  EXPECT_STREQ(selector.current(), "none");
  ExpectTakesOverAtTheThirdAccess(&selector, stream, "strided", Blocks({22, 27, 32, 37}), 6);
}

TEST(PredictorSelectorTest, StridedBackwardStopsAtTheStartOfTheFile) {
  const Accesses stream = Stream(60, {-3}, 21);  // ends at block 0
  PredictorSelector selector;
  ExpectPredictsFrom(&selector, stream, 3, 15, 5, "strided");
  for (size_t i = 15; i < stream.size(); ++i) selector.Observe(stream[i]);
  EXPECT_STREQ(selector.current(), "strided");
  EXPECT_TRUE(selector.Predict(4).empty());  // nothing below offset 0
  EXPECT_EQ(selector.history().back(), Block(0));
}

TEST(PredictorSelectorTest, NestedPeriodTwo) {
  // Seed 000's (1 MB, 3 MB) nested stride, with 1 MB blocks: deltas 1, 3.
  const Accesses stream = Stream(0, {1, 3}, 40);
  PredictorSelector selector;
  ExpectPredictsFrom(&selector, stream, 6, 32, 6, "nested");
}

TEST(PredictorSelectorTest, NestedPeriodThree) {
  const Accesses stream = Stream(0, {1, 1, 8}, 40);
  PredictorSelector selector;
  ExpectPredictsFrom(&selector, stream, 9, 32, 7, "nested");
}

TEST(PredictorSelectorTest, NestedThreeLevelsWithAWindowOfTen) {
  const Accesses stream = Stream(0, {1, 4, 1, 10}, 50);
  PredictorSelector selector(8);
  selector.SetWindow(10);
  ExpectPredictsFrom(&selector, stream, 10, 40, 9, "nested");
}

TEST(PredictorSelectorTest, MarkovCycleLongerThanTheWindow) {
  const Accesses stream = Stream(1000, kLongCycle, 60);
  PredictorSelector selector;
  ExpectPredictsFrom(&selector, stream, 22, 45, 12, "markov");
}

TEST(PredictorSelectorTest, SwitchesToTheNewPatternAndDropsTheOld) {
  constexpr size_t kCount = 4;
  struct Phase {
    uint64_t first;
    std::vector<int64_t> cycle;
    size_t length;
    size_t settle;  // the first access of the phase after which it is predicted exactly
    const char* name;
    Accesses stream() const { return Stream(first, cycle, length); }
    // What the pattern would read next if it went on after its last access.
    Accesses continuation() const {
      const Accesses longer = Stream(first, cycle, length + kCount);
      return Accesses(longer.end() - kCount, longer.end());
    }
  };
  const std::vector<Phase> phases = {
      {0, {3}, 16, 2, "strided"},
      {5000, {1}, 16, 2, "sequential"},
      // Period 3 needs 2p + 2 = 8 accesses: nested is first right on access 8, a step of 1
      // where sequential is right too, but sequential's runs here are short and keep breaking
      // (a run of 2 broke at the first jump), so it is not believed and nested takes over.
      {9000, {1, 1, 8}, 24, 8, "nested"},
      // The strided predictor's runs broke short in the nested phase (a run of 1 each time),
      // so its first hit here is not enough: it is believed from its second.
      {20000, {-2}, 16, 3, "strided"},
      {30000, {7}, 16, 2, "strided"},
  };
  PredictorSelector selector;
  const Phase* previous = nullptr;
  for (const Phase& phase : phases) {
    const Accesses stream = phase.stream();
    const Accesses old_next = previous != nullptr ? previous->continuation() : Accesses{};
    for (size_t i = 0; i < stream.size(); ++i) {
      selector.Observe(stream[i]);
      const Accesses predicted = selector.Predict(kCount);
      // The old pattern is dropped at once. On the first access of the new one, the predictor
      // that was right until then is still believed (one miss is forgiven), but it extrapolates
      // from the new access, so nothing the old pattern would read next is predicted.
      for (const Access& access : predicted) {
        EXPECT_EQ(std::count(old_next.begin(), old_next.end(), access), 0)
            << phase.name << " access " << i << " still predicts the old pattern";
      }
      if (i == 1) {
        // Two misses in a row: no predictor is believed.
        EXPECT_STREQ(selector.current(), "none") << phase.name;
        EXPECT_TRUE(predicted.empty()) << phase.name;
      }
      if (i < phase.settle) {
        EXPECT_NE(predicted, Future(stream, i, kCount)) << phase.name << " access " << i;
      } else if (i + kCount < stream.size()) {
        EXPECT_EQ(selector.current(), std::string(phase.name)) << "access " << i;
        EXPECT_EQ(predicted, Future(stream, i, kCount)) << phase.name << " access " << i;
      }
    }
    previous = &phase;
  }
}

// A subarray read row by row: the inner step is a pattern of its own until the jump breaks it.
// Once a short run has broken, that predictor is not believed again while the nested cycle is
// learnt, and from then on the selector predicts only what the stream reads. Wrong guesses
// come only from a predictor's first run: in the first cycle, and for a cycle of 4 also from
// the Markov chain, whose first run starts once it has seen each transition.
TEST(PredictorSelectorTest, ShortRunsThatBreakAreNotBelievedWhileTheCycleIsLearnt) {
  struct Case {
    std::vector<int64_t> cycle;
    size_t wrong_before;  // no wrong guess after this access
  };
  for (const Case& test : std::vector<Case>{
           {{1, 1, 8}, 3}, {{2, 2, 28}, 3}, {{1, 5}, 2}, {{3, 3, 3, 40}, 8}}) {
    const std::vector<int64_t>& cycle = test.cycle;
    const Accesses stream = Stream(64, cycle, 60);
    PredictorSelector selector(std::max<size_t>(8, 2 * cycle.size() + 2));
    size_t last_wrong = 0;
    size_t first_exact = stream.size();
    for (size_t i = 0; i + 8 < stream.size(); ++i) {
      selector.Observe(stream[i]);
      const Accesses predicted = selector.Predict(6);
      const Accesses future = Future(stream, i, 6);
      if (predicted != future && !predicted.empty()) last_wrong = i;
      if (predicted == future && first_exact == stream.size()) first_exact = i;
    }
    EXPECT_LT(last_wrong, test.wrong_before) << "cycle of " << cycle.size();
    // The nested predictor can predict once it has 2p + 2 accesses, and is believed from its
    // first hit, on the next.
    EXPECT_LE(first_exact, 2 * cycle.size() + 2) << "cycle of " << cycle.size();
  }
}

TEST(PredictorSelectorTest, ChangeFromSequentialToStridedStepByStep) {
  PredictorSelector selector;
  for (const Access& access : Stream(0, {1}, 10)) selector.Observe(access);
  EXPECT_EQ(selector.Predict(2), Blocks({10, 11}));
  selector.Observe(Block(100));  // the jump: sequential was right one access ago, but is lost
  EXPECT_STREQ(selector.current(), "sequential");
  EXPECT_TRUE(selector.Predict(2).empty());
  selector.Observe(Block(104));  // nobody was right twice in a row: no pattern
  EXPECT_STREQ(selector.current(), "none");
  EXPECT_TRUE(selector.Predict(2).empty());
  selector.Observe(Block(108));  // the strided predictor saw 100, 104 -> 108 coming
  EXPECT_STREQ(selector.current(), "strided");
  EXPECT_EQ(selector.Predict(2), Blocks({112, 116}));
  selector.Observe(Block(112));
  EXPECT_STREQ(selector.current(), "strided");
  EXPECT_EQ(selector.Predict(2), Blocks({116, 120}));
}

// Runs `steps` random accesses through a selector; returns the share that got a prediction.
double PredictedShare(std::mt19937_64* random, uint64_t file_blocks, bool random_lengths,
                      int steps) {
  PredictorSelector selector;
  int predicted = 0;
  for (int i = 0; i < steps; ++i) {
    const uint64_t length = random_lengths ? 1 + (*random)() % (4 * kB) : kB;
    selector.Observe({((*random)() % file_blocks) * kB, length});
    if (!selector.Predict(4).empty()) ++predicted;
  }
  return static_cast<double>(predicted) / steps;
}

TEST(PredictorSelectorTest, RandomAccessPredictsNothing) {
  std::mt19937_64 random(20240611);
  EXPECT_LE(PredictedShare(&random, uint64_t{1} << 18, false, 20000), 0.01);  // 1 GiB file
  EXPECT_LE(PredictedShare(&random, uint64_t{1} << 12, false, 20000), 0.01);  // 16 MiB file
  EXPECT_LE(PredictedShare(&random, uint64_t{1} << 18, true, 20000), 0.01);
}

TEST(PredictorSelectorTest, RandomAccessAfterAPatternStopsPredicting) {
  PredictorSelector selector;
  for (const Access& access : Stream(0, {1}, 20)) selector.Observe(access);
  ASSERT_FALSE(selector.Predict(1).empty());
  std::mt19937_64 random(99);
  int predicted = 0;
  for (int i = 0; i < 1000; ++i) {
    selector.Observe(Block(random() % (1 << 18)));
    if (!selector.Predict(4).empty()) ++predicted;
  }
  EXPECT_LE(predicted, 10);
}

TEST(PredictorSelectorTest, CountsHitsPerPredictor) {
  PredictorSelector selector;
  for (const Access& access : Stream(0, {1}, 10)) selector.Observe(access);
  EXPECT_EQ(selector.hits("sequential"), 8u);  // accesses 3 to 10
  EXPECT_EQ(selector.hits("strided"), 8u);     // accesses 3 to 10: one delta is a proposal
  EXPECT_EQ(selector.hits("nested"), 0u);      // a plain stride is not nested
  EXPECT_EQ(selector.hits("markov"), 6u);      // 1 -> 1 seen twice by access 4
  EXPECT_EQ(selector.hits("no such predictor"), 0u);
}

TEST(PredictorSelectorTest, IgnoresEmptyReads) {
  PredictorSelector selector;
  for (uint64_t block = 0; block < 6; ++block) {
    selector.Observe(Block(block));
    selector.Observe({block * kB + 100, 0});
  }
  EXPECT_EQ(selector.history().size(), 6u);
  EXPECT_STREQ(selector.current(), "sequential");
  EXPECT_EQ(selector.Predict(2), Blocks({6, 7}));
}

TEST(PredictorSelectorTest, ResetForgetsThePatternButNotTheHitCounts) {
  const Accesses cycle = Stream(1000, kLongCycle, 41);
  PredictorSelector selector;
  for (const Access& access : cycle) selector.Observe(access);
  EXPECT_STREQ(selector.current(), "markov");
  const uint64_t markov_hits = selector.hits("markov");
  EXPECT_GT(markov_hits, 0u);

  selector.Reset();
  EXPECT_STREQ(selector.current(), "none");
  EXPECT_TRUE(selector.Predict(4).empty());
  EXPECT_TRUE(selector.history().empty());
  EXPECT_EQ(selector.hits("markov"), markov_hits);
  // The Markov table is gone too: one more pass of the cycle is not enough to predict it.
  for (size_t i = 0; i < 11; ++i) {
    selector.Observe(cycle[i]);
    EXPECT_TRUE(selector.Predict(4).empty()) << "after access " << i;
  }
}

}  // namespace
}  // namespace stagio
