// The fetches under way into one node-cache frame: several at once, each with its bytes, and
// what a reader or a prefetch may conclude from them.
#include "node/frame_fetches.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace stagio {
namespace {

TEST(FrameFetchesTest, FetchesOfDifferentBytesRunSideBySideUpToTheSlots) {
  FrameFetches fetches;
  fetches.Clear();
  EXPECT_FALSE(fetches.busy());
  for (int i = 0; i < FrameFetches::kSlots; ++i) {
    EXPECT_NE(fetches.Start(getpid(), 1000 * i, 1000 * i + 100), FrameFetches::kNoSlot);
  }
  EXPECT_TRUE(fetches.busy());
  EXPECT_EQ(fetches.Start(getpid(), 9000, 9100), FrameFetches::kNoSlot);
}

TEST(FrameFetchesTest, ABringsWhatItsBytesCoverOfTheGaps) {
  FrameFetches fetches;
  fetches.Clear();
  fetches.Start(getpid(), 100, 200);
  ByteRanges valid;
  EXPECT_TRUE(fetches.BringAll(valid, 120, 180));
  EXPECT_FALSE(fetches.BringAll(valid, 120, 250));
  EXPECT_TRUE(fetches.BringAny(valid, 120, 250));
  EXPECT_FALSE(fetches.BringAny(valid, 300, 400));
  // Bytes already valid need no fetch: [200, 250) is known, the rest comes with the fetch.
  ASSERT_TRUE(valid.Add(200, 250));
  EXPECT_TRUE(fetches.BringAll(valid, 120, 250));
}

TEST(FrameFetchesTest, AFetchMarkedStaleSaysSoWhenItEnds) {
  FrameFetches fetches;
  fetches.Clear();
  const int first = fetches.Start(getpid(), 0, 10);
  fetches.MarkStale();
  const int second = fetches.Start(getpid(), 20, 30);  // started after: not stale
  EXPECT_TRUE(fetches.End(first));
  EXPECT_FALSE(fetches.End(second));
  EXPECT_FALSE(fetches.busy());
}

TEST(FrameFetchesTest, TheFetchOfAProcessThatDiedBringsNothingAndIsEnded) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // reaped: its pid names no process now
  FrameFetches fetches;
  fetches.Clear();
  fetches.Start(child, 0, 100);
  ByteRanges valid;
  EXPECT_FALSE(fetches.BringAny(valid, 0, 100));
  EXPECT_TRUE(fetches.busy());
  fetches.EndDead();
  EXPECT_FALSE(fetches.busy());
}

}  // namespace
}  // namespace stagio
