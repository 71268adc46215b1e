// RunAheadBudget: the bytes a pre-execution helper has announced for main-thread calls that
// have not finished yet, and which of them the helper must wait for before it fetches more.
#include "preexec/run_ahead_budget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "preexec/main_thread_progress.h"

namespace stagio {
namespace {

// The main thread makes its next call on the file, start to end.
void MakeCall(MainThreadProgress& progress) {
  progress.BeginCall();
  progress.EndCall();
}

class RunAheadBudgetTest : public ::testing::Test {
 protected:
  std::shared_ptr<MainThreadProgress> file_a_ = std::make_shared<MainThreadProgress>();
  std::shared_ptr<MainThreadProgress> file_b_ = std::make_shared<MainThreadProgress>();
};

TEST_F(RunAheadBudgetTest, NothingToWaitForWhileTheBytesFit) {
  RunAheadBudget budget(100);
  EXPECT_EQ(budget.limit_bytes(), 100u);
  EXPECT_EQ(budget.MustWaitFor(100), nullptr);
  budget.Add(file_a_, 1, 60);
  EXPECT_EQ(budget.outstanding_bytes(), 60u);
  EXPECT_EQ(budget.MustWaitFor(40), nullptr) << "exactly the limit still fits";
  EXPECT_NE(budget.MustWaitFor(41), nullptr);
}

TEST_F(RunAheadBudgetTest, OneCallLargerThanTheLimitGoesAloneWhenNothingIsOutstanding) {
  RunAheadBudget budget(100);
  EXPECT_EQ(budget.MustWaitFor(1000), nullptr);
  budget.Add(file_a_, 1, 1000);
  EXPECT_EQ(budget.outstanding_bytes(), 1000u);
  const RunAheadBudget::Announcement* oldest = budget.MustWaitFor(1);
  ASSERT_NE(oldest, nullptr) << "nothing more until the large call is consumed";
  EXPECT_EQ(oldest->sequence, 1u);
}

TEST_F(RunAheadBudgetTest, EmptyAnnouncementsAreNotCounted) {
  RunAheadBudget budget(100);
  budget.Add(file_a_, 1, 0);
  EXPECT_EQ(budget.outstanding_bytes(), 0u);
  EXPECT_EQ(budget.MustWaitFor(1000), nullptr) << "nothing is outstanding";
}

TEST_F(RunAheadBudgetTest, OverTheLimitTheOldestAnnouncementIsReturned) {
  RunAheadBudget budget(100);
  budget.Add(file_a_, 3, 30);
  budget.Add(file_b_, 1, 30);
  budget.Add(file_a_, 4, 30);
  const RunAheadBudget::Announcement* oldest = budget.MustWaitFor(20);
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->main, file_a_);
  EXPECT_EQ(oldest->sequence, 3u);
  EXPECT_EQ(oldest->bytes, 30u);
}

TEST_F(RunAheadBudgetTest, ReleaseConsumedForgetsCallsTheMainThreadHasFinished) {
  RunAheadBudget budget(100);
  budget.Add(file_a_, 1, 40);
  budget.Add(file_a_, 2, 40);
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 80u) << "nothing finished yet";

  file_a_->BeginCall();  // call 1 begun, not finished: its bytes are still to be read
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 80u);
  file_a_->EndCall();
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 40u);
  const RunAheadBudget::Announcement* oldest = budget.MustWaitFor(61);
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->sequence, 2u);
  EXPECT_EQ(budget.MustWaitFor(60), nullptr);

  MakeCall(*file_a_);
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 0u);
  EXPECT_EQ(budget.MustWaitFor(1000), nullptr);
}

TEST_F(RunAheadBudgetTest, ReleaseConsumedForgetsEveryCallOfAClosedFile) {
  RunAheadBudget budget(100);
  budget.Add(file_a_, 1, 30);
  budget.Add(file_a_, 7, 30);
  budget.Add(file_b_, 1, 30);
  file_a_->MarkClosed();  // no call of file A finished, but none will be read now
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 30u);
  const RunAheadBudget::Announcement* oldest = budget.MustWaitFor(71);
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->main, file_b_);
}

TEST_F(RunAheadBudgetTest, FilesFinishingOutOfOrderAreAllReleased) {
  RunAheadBudget budget(100);
  budget.Add(file_a_, 1, 40);  // oldest
  budget.Add(file_b_, 1, 40);
  budget.Add(file_b_, 2, 10);
  // File B's calls finish first; A's, the oldest announcement, is still pending.
  MakeCall(*file_b_);
  MakeCall(*file_b_);
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 40u);
  const RunAheadBudget::Announcement* oldest = budget.MustWaitFor(61);
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->main, file_a_);
  EXPECT_EQ(oldest->sequence, 1u);

  MakeCall(*file_a_);
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 0u);
}

TEST_F(RunAheadBudgetTest, AMiddleAnnouncementFinishingFirstIsReleased) {
  RunAheadBudget budget(100);
  budget.Add(file_a_, 2, 30);
  budget.Add(file_b_, 1, 30);
  budget.Add(file_a_, 3, 30);
  MakeCall(*file_b_);
  budget.ReleaseConsumed();
  EXPECT_EQ(budget.outstanding_bytes(), 60u);
  const RunAheadBudget::Announcement* oldest = budget.MustWaitFor(50);
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->main, file_a_);
  EXPECT_EQ(oldest->sequence, 2u);
}

}  // namespace
}  // namespace stagio
