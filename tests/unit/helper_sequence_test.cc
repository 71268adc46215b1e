// MainThreadProgress and HelperSequence: the numbering of the main thread's calls on a file as
// a pre-execution helper sees it, lag detection, and the helper's waits for the main thread
// (until a call has finished, until the file is closed), released by close or by cancellation.
//
// A "main thread" here is the test thread or a thread it starts; the helper's waits run on
// another thread, whose result is what is checked.
#include "preexec/helper_sequence.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "preexec/main_thread_progress.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

using test_support::WaitUntil;

// ----- MainThreadProgress: numbering -------------------------------------------------------

TEST(MainThreadProgressTest, CallsAreNumberedFromOneAsTheyBegin) {
  MainThreadProgress progress;
  EXPECT_EQ(progress.begun(), 0u);
  EXPECT_EQ(progress.finished(), 0u);
  EXPECT_EQ(progress.BeginCall(), 1u);
  EXPECT_EQ(progress.begun(), 1u);
  EXPECT_EQ(progress.finished(), 0u) << "begun, not finished";
  progress.EndCall();
  EXPECT_EQ(progress.finished(), 1u);
  EXPECT_EQ(progress.BeginCall(), 2u);
  progress.EndCall();
  EXPECT_EQ(progress.BeginCall(), 3u);
  EXPECT_EQ(progress.finished(), 2u);
  EXPECT_FALSE(progress.closed());
  progress.MarkClosed();
  EXPECT_TRUE(progress.closed());
}

TEST(MainThreadProgressTest, SequencedCallBeginsAndEndsOneCallForItsScope) {
  MainThreadProgress progress;
  {
    SequencedCall call(progress);
    EXPECT_EQ(progress.begun(), 1u);
    EXPECT_EQ(progress.finished(), 0u);
  }
  EXPECT_EQ(progress.begun(), 1u);
  EXPECT_EQ(progress.finished(), 1u);
  {
    SequencedCall call(progress);
    EXPECT_EQ(progress.begun(), 2u);
  }
  EXPECT_EQ(progress.finished(), 2u);
}

// ----- HelperSequence ----------------------------------------------------------------------

TEST(HelperSequenceTest, NumbersTheHelpersCallsFromTheBase) {
  auto progress = std::make_shared<MainThreadProgress>();
  HelperSequence at_open(progress, 0);
  EXPECT_EQ(at_open.Next(), 1u);
  EXPECT_EQ(at_open.Next(), 2u);
  // Taken while the main thread had begun 5 calls: the helper's next call stands for its 6th.
  HelperSequence later(progress, 5);
  EXPECT_EQ(later.Next(), 6u);
  EXPECT_EQ(later.Next(), 7u);
  EXPECT_EQ(&later.main(), progress.get());
  EXPECT_EQ(later.shared_main(), progress);
}

TEST(HelperSequenceTest, BehindOnceTheMainThreadBeginsThatCall) {
  auto progress = std::make_shared<MainThreadProgress>();
  HelperSequence sequence(progress, 0);
  const uint64_t first = sequence.Next();
  const uint64_t second = sequence.Next();
  EXPECT_FALSE(sequence.Behind(first));
  EXPECT_FALSE(sequence.Behind(second));

  progress->BeginCall();  // call 1 begins: too late to prefetch for it, not for call 2
  EXPECT_TRUE(sequence.Behind(first));
  EXPECT_FALSE(sequence.Behind(second));
  progress->EndCall();
  EXPECT_TRUE(sequence.Behind(first)) << "a finished call stays behind";
  EXPECT_FALSE(sequence.Behind(second));

  progress->BeginCall();
  EXPECT_TRUE(sequence.Behind(second));
}

TEST(HelperSequenceTest, EveryCallIsBehindOnceTheFileIsClosed) {
  auto progress = std::make_shared<MainThreadProgress>();
  HelperSequence sequence(progress, 0);
  const uint64_t next = sequence.Next();
  ASSERT_FALSE(sequence.Behind(next));
  progress->MarkClosed();
  EXPECT_TRUE(sequence.Behind(next));
  EXPECT_TRUE(sequence.Behind(sequence.Next()));
}

// ----- MainThreadProgress: the helper's waits ----------------------------------------------

// Runs `wait` on a helper thread; result() joins it and returns what the wait returned.
class HelperWait {
 public:
  template <typename Wait>
  explicit HelperWait(Wait wait) : thread_([this, wait] { result_ = wait(); }) {}
  ~HelperWait() {
    if (thread_.joinable()) thread_.join();
  }
  bool result() {
    thread_.join();
    return result_;
  }

 private:
  bool result_ = false;
  std::thread thread_;
};

TEST(MainThreadProgressTest, WaitUntilFinishedReturnsAtOnceForAFinishedCall) {
  MainThreadProgress progress;
  const std::atomic<bool> cancelled{false};
  EXPECT_TRUE(progress.WaitUntilFinished(0, cancelled));
  progress.BeginCall();
  progress.EndCall();
  EXPECT_TRUE(progress.WaitUntilFinished(1, cancelled));
}

TEST(MainThreadProgressTest, WaitUntilFinishedReturnsTrueWhenAnotherThreadEndsTheCall) {
  MainThreadProgress progress;
  const std::atomic<bool> cancelled{false};
  HelperWait helper([&] {
    const bool finished = progress.WaitUntilFinished(2, cancelled);
    // Woken by the end of call 2, not of call 1.
    EXPECT_GE(progress.finished(), 2u);
    return finished;
  });
  progress.BeginCall();
  progress.EndCall();
  progress.BeginCall();
  progress.EndCall();
  EXPECT_TRUE(helper.result());
}

TEST(MainThreadProgressTest, WaitUntilFinishedReturnsFalseWhenTheFileIsClosedFirst) {
  MainThreadProgress progress;
  const std::atomic<bool> cancelled{false};
  HelperWait helper([&] { return progress.WaitUntilFinished(5, cancelled); });
  progress.BeginCall();
  progress.EndCall();
  progress.MarkClosed();
  EXPECT_FALSE(helper.result());
}

TEST(MainThreadProgressTest, WaitUntilFinishedIsTrueForACallFinishedBeforeTheClose) {
  MainThreadProgress progress;
  const std::atomic<bool> cancelled{false};
  progress.BeginCall();
  progress.EndCall();
  progress.MarkClosed();
  EXPECT_TRUE(progress.WaitUntilFinished(1, cancelled));
  EXPECT_FALSE(progress.WaitUntilFinished(2, cancelled));
}

TEST(MainThreadProgressTest, WaitUntilFinishedReturnsFalseWhenCancelledAndWoken) {
  MainThreadProgress progress;
  std::atomic<bool> cancelled{false};
  HelperWait helper([&] { return progress.WaitUntilFinished(1, cancelled); });
  cancelled.store(true);
  progress.Wake();
  EXPECT_FALSE(helper.result());
  EXPECT_FALSE(progress.closed());
  EXPECT_EQ(progress.finished(), 0u);
}

TEST(MainThreadProgressTest, WaitUntilClosedReturnsTrueOnCloseNotOnCalls) {
  MainThreadProgress progress;
  const std::atomic<bool> cancelled{false};
  HelperWait helper([&] {
    const bool closed = progress.WaitUntilClosed(cancelled);
    EXPECT_TRUE(progress.closed()) << "returned before the close";
    return closed;
  });
  progress.BeginCall();
  progress.EndCall();
  progress.MarkClosed();
  EXPECT_TRUE(helper.result());
  EXPECT_TRUE(progress.WaitUntilClosed(cancelled)) << "closed already: returns at once";
}

TEST(MainThreadProgressTest, WaitUntilClosedReturnsFalseWhenCancelledAndWoken) {
  MainThreadProgress progress;
  std::atomic<bool> cancelled{false};
  HelperWait helper([&] { return progress.WaitUntilClosed(cancelled); });
  cancelled.store(true);
  progress.Wake();
  EXPECT_FALSE(helper.result());
}

// ----- MainThreadProgress::RunWhileOpen ----------------------------------------------------

TEST(MainThreadProgressTest, RunWhileOpenRunsTheWorkOnlyBeforeTheClose) {
  MainThreadProgress progress;
  int runs = 0;
  EXPECT_TRUE(progress.RunWhileOpen([&] { ++runs; }));
  EXPECT_EQ(runs, 1);
  progress.MarkClosed();
  EXPECT_FALSE(progress.RunWhileOpen([&] { ++runs; }));
  EXPECT_EQ(runs, 1);
}

TEST(MainThreadProgressTest, CloseWaitsForWorkRunningWhileOpen) {
  MainThreadProgress progress;
  std::atomic<bool> working{false};
  std::atomic<bool> release{false};
  std::atomic<bool> closing{false};
  bool closed_during_work = true;
  HelperWait helper([&] {
    return progress.RunWhileOpen([&] {
      working.store(true);
      WaitUntil([&] { return release.load(); });
      // The main thread's MarkClosed has started by now; it must not have got through.
      closed_during_work = progress.closed();
    });
  });
  ASSERT_TRUE(WaitUntil([&] { return working.load(); }));
  std::thread main_thread([&] {
    closing.store(true);
    progress.MarkClosed();
  });
  ASSERT_TRUE(WaitUntil([&] { return closing.load(); }));
  release.store(true);
  EXPECT_TRUE(helper.result());
  main_thread.join();
  EXPECT_FALSE(closed_during_work);
  EXPECT_TRUE(progress.closed());
}

}  // namespace
}  // namespace stagio
