// The fixture of the PPIS gate and helper-fetch tests: the prefetch-cache fixture's cache and
// file over a backend that also records, for each storage request, whether the main thread was
// inside I/O (IoPriorityGate::main_thread_inside) when the request started; a gate; the
// helper's cancelled flag; and FetchForHelper on this thread or on a helper thread.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "preexec/helper_fetch.h"
#include "preexec/io_priority_gate.h"
#include "prefetch_cache_fixture.h"
#include "read_logging_backend.h"
#include "test_helpers.h"

namespace stagio {
namespace test_support {

class GateObservingBackend : public ReadLoggingBackend {
 public:
  GateObservingBackend(uint64_t block_size, std::vector<char> content, const IoPriorityGate* gate)
      : ReadLoggingBackend(block_size, std::move(content)), gate_(gate) {}

  // Storage requests that started while the main thread was inside I/O.
  int requests_with_main_inside() {
    std::lock_guard<std::mutex> lock(mutex_);
    int count = 0;
    for (bool inside : main_inside_) count += inside ? 1 : 0;
    return count;
  }

 private:
  void OnReadBlock(uint64_t) override { main_inside_.push_back(gate_->main_thread_inside()); }

  const IoPriorityGate* gate_;
  std::vector<bool> main_inside_;  // per ReadRange, in order
};

class HelperFetchFixture : public PrefetchCacheFixture {
 protected:
  std::shared_ptr<ReadLoggingBackend> MakeBackend(const std::vector<char>& content) override {
    observing_ = std::make_shared<GateObservingBackend>(kBlock, content, &gate_);
    return observing_;
  }

  HelperFetchOptions Options(bool ppis, uint64_t max_request_bytes = 4ull << 20) {
    HelperFetchOptions options;
    options.gate = &gate_;
    options.ppis = ppis;
    options.max_request_bytes = max_request_bytes;
    return options;
  }

  // The whole blocks `blocks`, as the spans FetchForHelper takes.
  static std::vector<ByteSpan> WholeBlocks(const std::vector<uint64_t>& blocks) {
    std::vector<ByteSpan> spans;
    for (uint64_t index : blocks) spans.push_back(ByteSpan{index * kBlock, kBlock});
    return spans;
  }

  // FetchForHelper of the whole blocks `blocks` of the fixture's file, on the calling thread.
  HelperFetchResult Fetch(const std::vector<uint64_t>& blocks, const HelperFetchOptions& options,
                          const std::function<bool()>& still_wanted = [] { return true; }) {
    return FetchSpans(WholeBlocks(blocks), options, still_wanted);
  }
  // FetchForHelper of byte spans of the fixture's file, on the calling thread.
  HelperFetchResult FetchSpans(const std::vector<ByteSpan>& spans,
                               const HelperFetchOptions& options,
                               const std::function<bool()>& still_wanted = [] { return true; }) {
    return FetchForHelper(*cache_, kFile, spans, options, cancelled_,
                          [&still_wanted] { return still_wanted(); });
  }

  // The same on a helper thread. Returns once the thread has started; done() says when the
  // fetch has returned, result() what it returned (after done()).
  void StartHelper(const std::vector<uint64_t>& blocks, const HelperFetchOptions& options) {
    helper_ = std::make_unique<Background>(
        [this, blocks, options] {
          result_ = Fetch(blocks, options);
          done_.store(true);
        },
        // On a failed assertion the helper may be held at the gate or in the backend.
        [this] {
          cancelled_.store(true);
          gate_.Wake();
          backend_->ReleaseRead();
        });
  }
  bool done() const { return done_.load(); }
  // Waits (bounded) for the helper's fetch to return, then joins it; false if it did not.
  bool FinishHelper() {
    const bool finished = WaitUntil([this] { return done(); });
    const bool cancelled = cancelled_.load();
    helper_.reset();  // its cleanup cancels, for a helper that did not finish
    cancelled_.store(cancelled);
    return finished;
  }
  const HelperFetchResult& result() const { return result_; }

  void TearDown() override {
    helper_.reset();  // releases and joins a helper left running by a failed assertion
    PrefetchCacheFixture::TearDown();
  }

  IoPriorityGate gate_;
  std::atomic<bool> cancelled_{false};
  std::shared_ptr<GateObservingBackend> observing_;

 private:
  std::unique_ptr<Background> helper_;
  std::atomic<bool> done_{false};
  HelperFetchResult result_;
};

}  // namespace test_support
}  // namespace stagio
