// IoPriorityGate (PPIS: the main thread's I/O goes first) on its own, and as FetchForHelper
// meets it: a helper starts no storage request while the main thread is inside I/O, a request
// already under way finishes, PP mode does not wait, and cancellation releases a waiting
// helper. The backend records whether the main thread was inside I/O when each request began.
//
// "Waiting at the gate" is observed through IoPriorityGate::waiting(), polled with a limit that
// only guards against hangs.
#include "preexec/io_priority_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "support/helper_fetch_fixture.h"
#include "support/test_helpers.h"

namespace stagio {
namespace {

using test_support::WaitUntil;
using Reads = std::vector<test_support::ReadLoggingBackend::ReadRecord>;

// ----- the gate alone ----------------------------------------------------------------------

TEST(IoPriorityGateTest, OpenGateDoesNotHoldAHelper) {
  IoPriorityGate gate;
  const std::atomic<bool> cancelled{false};
  EXPECT_FALSE(gate.main_thread_inside());
  EXPECT_FALSE(gate.WaitForMainThread(cancelled)) << "returned true: it says it waited";
  EXPECT_EQ(gate.waiting(), 0);
}

TEST(IoPriorityGateTest, NestedCallsKeepTheMainThreadInsideUntilTheOutermostLeaves) {
  IoPriorityGate gate;
  gate.Enter();
  gate.Enter();  // a close that flushes
  gate.Leave();
  EXPECT_TRUE(gate.main_thread_inside());
  gate.Leave();
  EXPECT_FALSE(gate.main_thread_inside());
}

TEST(IoPriorityGateTest, MainThreadIoIsInsideForItsScope) {
  IoPriorityGate gate;
  {
    MainThreadIo io(&gate);
    EXPECT_TRUE(gate.main_thread_inside());
  }
  EXPECT_FALSE(gate.main_thread_inside());
  MainThreadIo without_gate(nullptr);  // pre-execution not set up: nothing to do
}

// Starts a helper thread waiting at `gate`; its result is what WaitForMainThread returned.
class GateWaiter {
 public:
  GateWaiter(IoPriorityGate& gate, const std::atomic<bool>& cancelled)
      : thread_([&] {
          result_ = gate.WaitForMainThread(cancelled);
          done_.store(true);
        }) {}
  ~GateWaiter() {
    if (thread_.joinable()) thread_.join();
  }
  bool done() const { return done_.load(); }
  bool result() {
    thread_.join();
    return result_;
  }

 private:
  std::atomic<bool> done_{false};
  bool result_ = false;
  std::thread thread_;
};

TEST(IoPriorityGateTest, HelperWaitsWhileTheMainThreadIsInsideAndGoesWhenItLeaves) {
  IoPriorityGate gate;
  const std::atomic<bool> cancelled{false};
  gate.Enter();
  GateWaiter helper(gate, cancelled);
  ASSERT_TRUE(WaitUntil([&] { return gate.waiting() == 1; }));
  EXPECT_FALSE(helper.done());
  gate.Leave();
  EXPECT_TRUE(helper.result()) << "it waited";
  EXPECT_EQ(gate.waiting(), 0);
}

TEST(IoPriorityGateTest, HelperWaitsForTheOutermostCallToLeave) {
  IoPriorityGate gate;
  const std::atomic<bool> cancelled{false};
  gate.Enter();
  gate.Enter();
  GateWaiter helper(gate, cancelled);
  ASSERT_TRUE(WaitUntil([&] { return gate.waiting() == 1; }));
  gate.Leave();
  EXPECT_FALSE(helper.done()) << "let go while the main thread was still inside";
  gate.Leave();
  EXPECT_TRUE(helper.result());
}

TEST(IoPriorityGateTest, CancelledAndWokenHelperLeavesWhileTheMainThreadIsInside) {
  IoPriorityGate gate;
  std::atomic<bool> cancelled{false};
  gate.Enter();
  GateWaiter helper(gate, cancelled);
  ASSERT_TRUE(WaitUntil([&] { return gate.waiting() == 1; }));
  cancelled.store(true);
  gate.Wake();
  EXPECT_TRUE(helper.result());
  EXPECT_TRUE(gate.main_thread_inside());
  EXPECT_EQ(gate.waiting(), 0);
  gate.Leave();
}

// ----- the gate in FetchForHelper ----------------------------------------------------------

class PpisGateTest : public test_support::HelperFetchFixture {};

TEST_F(PpisGateTest, HelperStartsNoRequestWhileTheMainThreadIsInside) {
  Init(16 * kBlock, 16 * kBlock);
  gate_.Enter();
  StartHelper({2, 3, 4}, Options(/*ppis=*/true));
  ASSERT_TRUE(WaitUntil([&] { return gate_.waiting() == 1; }));
  EXPECT_EQ(backend_->read_calls(), 0) << "a request started while the main thread did I/O";
  gate_.Leave();
  ASSERT_TRUE(FinishHelper());

  EXPECT_EQ(backend_->reads(), (Reads{{2, 0, 3 * kBlock}})) << "one request for the run";
  EXPECT_EQ(observing_->requests_with_main_inside(), 0);
  EXPECT_EQ(result().gate_waits, 1u);
  EXPECT_EQ(result().announced_bytes, 3 * kBlock);
  EXPECT_FALSE(result().lagging);
  EXPECT_FALSE(result().failed);
  for (uint64_t index : {2, 3, 4}) EXPECT_TRUE(cache_->Contains(kFile, index)) << index;
  EXPECT_EQ(Stat(Counter::prefetch_issued), 3u);
}

TEST_F(PpisGateTest, RequestUnderWayFinishesAndTheNextWaitsAtTheGate) {
  Init(16 * kBlock, 16 * kBlock);
  backend_->HoldNextRead();
  StartHelper({1, 5}, Options(/*ppis=*/true));  // two runs: two requests
  ASSERT_TRUE(backend_->WaitReadHeld());          // the first is under way...
  gate_.Enter();                                  // ... when the main thread enters
  backend_->ReleaseRead();
  ASSERT_TRUE(WaitUntil([&] { return gate_.waiting() == 1; }));
  EXPECT_EQ(backend_->read_calls(), 1) << "the second request did not wait for the main thread";
  EXPECT_TRUE(cache_->Contains(kFile, 1)) << "the request under way did not land";
  EXPECT_FALSE(cache_->Contains(kFile, 5));
  gate_.Leave();
  ASSERT_TRUE(FinishHelper());

  EXPECT_EQ(backend_->reads(), (Reads{{1, 0, kBlock}, {5, 0, kBlock}}));
  EXPECT_EQ(observing_->requests_with_main_inside(), 0);
  EXPECT_EQ(result().gate_waits, 1u);
  EXPECT_EQ(result().announced_bytes, 2 * kBlock);
}

TEST_F(PpisGateTest, PpModeFetchesWhileTheMainThreadIsInside) {
  Init(16 * kBlock, 16 * kBlock);
  gate_.Enter();
  StartHelper({1, 2, 6}, Options(/*ppis=*/false));
  ASSERT_TRUE(FinishHelper()) << "the PP helper waited for the main thread";
  EXPECT_EQ(backend_->reads(), (Reads{{1, 0, 2 * kBlock}, {6, 0, kBlock}}));
  EXPECT_EQ(observing_->requests_with_main_inside(), 2);
  EXPECT_EQ(result().gate_waits, 0u);
  EXPECT_EQ(gate_.waiting(), 0);
  gate_.Leave();
}

TEST_F(PpisGateTest, WithoutAGateThereIsNothingToWaitAt) {
  Init(16 * kBlock, 16 * kBlock);
  gate_.Enter();
  HelperFetchOptions options = Options(/*ppis=*/true);
  options.gate = nullptr;
  const HelperFetchResult fetched = Fetch({3}, options);
  EXPECT_EQ(fetched.gate_waits, 0u);
  EXPECT_EQ(backend_->read_calls(), 1);
  gate_.Leave();
}

TEST_F(PpisGateTest, CancelledHelperLeavesTheGateAndFetchesNothing) {
  Init(16 * kBlock, 16 * kBlock);
  gate_.Enter();
  StartHelper({2, 3}, Options(/*ppis=*/true));
  ASSERT_TRUE(WaitUntil([&] { return gate_.waiting() == 1; }));
  cancelled_.store(true);
  gate_.Wake();
  ASSERT_TRUE(FinishHelper()) << "cancellation did not release the helper";
  EXPECT_TRUE(gate_.main_thread_inside());
  EXPECT_EQ(backend_->read_calls(), 0);
  EXPECT_EQ(result().announced_bytes, 0u);
  EXPECT_EQ(result().gate_waits, 1u);
  EXPECT_FALSE(cache_->Contains(kFile, 2));
  gate_.Leave();
}

TEST_F(PpisGateTest, CancelledHelperFetchesNothingMoreAfterItsFirstRun) {
  Init(16 * kBlock, 16 * kBlock);
  backend_->HoldNextRead();
  StartHelper({1, 4, 8}, Options(/*ppis=*/true));  // three runs
  ASSERT_TRUE(backend_->WaitReadHeld());
  gate_.Enter();
  backend_->ReleaseRead();
  ASSERT_TRUE(WaitUntil([&] { return gate_.waiting() == 1; }));
  cancelled_.store(true);
  gate_.Wake();
  ASSERT_TRUE(FinishHelper());
  EXPECT_EQ(backend_->reads(), (Reads{{1, 0, kBlock}}));
  EXPECT_EQ(result().announced_bytes, kBlock) << "only the run fetched before the cancel";
  EXPECT_FALSE(cache_->Contains(kFile, 4));
  EXPECT_FALSE(cache_->Contains(kFile, 8));
  gate_.Leave();
}

}  // namespace
}  // namespace stagio
