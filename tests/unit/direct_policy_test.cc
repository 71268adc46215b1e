// The direct path's decision (direct/direct_policy.h) on synthetic call streams, and the storage
// speed it learns from (storage/storage_speed.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "direct/direct_policy.h"
#include "storage/storage_speed.h"

namespace stagio {
namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kCache = 64 * kMiB;
// Seconds per byte of a memory copy, about what this machine does (10 GB/s).
constexpr double kCopy = 0.1e-9;

DirectCallFacts Call(uint64_t bytes, std::optional<double> storage = std::nullopt) {
  DirectCallFacts facts;
  facts.bytes = bytes;
  facts.cache_capacity = kCache;
  facts.storage_seconds_per_byte = storage;
  return facts;
}

// The decisions for a stream of calls, in order.
std::vector<DirectReason> Decide(DirectPolicy& policy, DirectMode mode,
                                 const std::vector<DirectCallFacts>& calls) {
  std::vector<DirectReason> reasons;
  for (const DirectCallFacts& call : calls) reasons.push_back(policy.Decide(mode, call));
  return reasons;
}

TEST(DirectPolicyTest, ParsesEveryModeAndFallsBackToAuto) {
  EXPECT_EQ(ParseDirectMode("always"), DirectMode::kAlways);
  EXPECT_EQ(ParseDirectMode("never"), DirectMode::kNever);
  EXPECT_EQ(ParseDirectMode("alternate"), DirectMode::kAlternate);
  EXPECT_EQ(ParseDirectMode("auto"), DirectMode::kAuto);
  EXPECT_EQ(ParseDirectMode("sometimes"), DirectMode::kAuto);
}

TEST(DirectPolicyTest, ForcedModesIgnoreWhatWasMeasured) {
  DirectPolicy policy;
  const DirectCallFacts huge_on_fast_storage = Call(kCache, 0.1e-9);
  const DirectCallFacts small_on_slow_storage = Call(4096, 25e-9);
  EXPECT_EQ(policy.Decide(DirectMode::kNever, huge_on_fast_storage), DirectReason::kCached);
  EXPECT_EQ(policy.Decide(DirectMode::kAlways, small_on_slow_storage), DirectReason::kForced);
}

TEST(DirectPolicyTest, AlternateSendsEveryOtherCallDirectStartingThroughTheCache) {
  DirectPolicy policy;
  const std::vector<DirectCallFacts> calls(5, Call(4096));
  EXPECT_EQ(Decide(policy, DirectMode::kAlternate, calls),
            (std::vector<DirectReason>{DirectReason::kCached, DirectReason::kForced,
                                       DirectReason::kCached, DirectReason::kForced,
                                       DirectReason::kCached}));
}

TEST(DirectPolicyTest, OnceStorageIsSlowOnlyLargeTransfersGoDirect) {
  DirectPolicy policy;
  const double slow = 25e-9;  // the emulated 40 MB/s device
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(4 * kMiB, slow)), DirectReason::kCached);
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(kCache / 4 - 1, slow)), DirectReason::kCached);
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(kCache / 4, slow)), DirectReason::kLarge);
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(kCache * 2, slow)), DirectReason::kLarge);
  // Large wins over a probe: it goes direct whatever the speed.
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(kCache / 4)), DirectReason::kLarge);
}

TEST(DirectPolicyTest, AnUntimedCallGoesDirectAsAProbe) {
  for (const bool write : {false, true}) {
    DirectPolicy policy;
    DirectCallFacts call = Call(StorageSpeed::kMinSampleBytes);
    call.write = write;
    EXPECT_EQ(policy.Decide(DirectMode::kAuto, call), DirectReason::kProbe) << write;
    call.bytes = 40 * 1024;  // small ones too: a few of them make a sample
    EXPECT_EQ(policy.Decide(DirectMode::kAuto, call), DirectReason::kProbe) << write;
    call.bytes = 0;  // nothing to time
    EXPECT_EQ(policy.Decide(DirectMode::kAuto, call), DirectReason::kCached) << write;
    // Once timed, a slow device keeps the calls in the cache.
    call.bytes = kMiB;
    call.storage_seconds_per_byte = 25e-9;
    EXPECT_EQ(policy.Decide(DirectMode::kAuto, call), DirectReason::kCached) << write;
  }
  EXPECT_FALSE(DirectPolicy::IsFast(std::nullopt, kMiB));
  EXPECT_FALSE(DirectPolicy::IsFast(25e-9, kMiB));
  EXPECT_TRUE(DirectPolicy::IsFast(0.2e-9, kMiB));
}

// A file read or written in small pieces: the probes end once their times make a sample, and
// what follows depends on the speed they found, fixed costs included.
TEST(DirectPolicyTest, SmallCallsProbeUntilTheyMakeASample) {
  for (const bool write : {false, true}) {
    const StorageDirection direction = write ? StorageDirection::kWrite : StorageDirection::kRead;
    for (const double seconds_per_call : {10e-6, 2e-3}) {  // tmpfs; a device with 2 ms latency
      DirectPolicy policy;
      StorageSpeed speed;
      std::vector<DirectReason> reasons;
      for (int call = 0; call < 2 * StorageSpeed::kSmallRequestsPerSample; ++call) {
        DirectCallFacts facts = Call(40 * 1024, speed.SecondsPerByte(direction));
        facts.write = write;
        reasons.push_back(policy.Decide(DirectMode::kAuto, facts));
        if (reasons.back() != DirectReason::kCached) {
          speed.Record(direction, facts.bytes, seconds_per_call);
        }
      }
      const auto probes = static_cast<size_t>(StorageSpeed::kSmallRequestsPerSample);
      for (size_t call = 0; call < reasons.size(); ++call) {
        const DirectReason expected = call < probes             ? DirectReason::kProbe
                                      : seconds_per_call < 1e-3 ? DirectReason::kFastStorage
                                                                : DirectReason::kCached;
        EXPECT_EQ(reasons[call], expected)
            << "call " << call << ", " << seconds_per_call << " s, write " << write;
      }
    }
  }
}

// A small call pays the cache path's fixed cost, not only a copy: storage that takes a 1 KiB
// write in 5 µs (tmpfs through MPI-IO) is fast for it, though its 5 ns per byte would be slow
// for a 1 MiB call; a parallel file system's 200 µs per small request is slow for both.
TEST(DirectPolicyTest, TheBoundOnFastStorageGrowsAsCallsShrink) {
  DirectPolicy policy;
  const double tmpfs_small = 5e-6 / 1024;
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(1024, tmpfs_small)),
            DirectReason::kFastStorage);
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(kMiB, tmpfs_small)), DirectReason::kCached);
  const double file_system_small = 200e-6 / 1024;
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(1024, file_system_small)),
            DirectReason::kCached);
  EXPECT_LT(DirectPolicy::FastStorageSecondsPerByte(kMiB),
            DirectPolicy::FastStorageSecondsPerByte(40 * 1024));
  EXPECT_GT(DirectPolicy::FastStorageSecondsPerByte(kMiB),
            DirectPolicy::kFastStorageSecondsPerByte);
}

TEST(DirectPolicyTest, LargeMeansLargeForTheCacheThereIs) {
  DirectPolicy policy;
  DirectCallFacts call = Call(64 * 1024);
  call.cache_capacity = 256 * 1024;  // a small stagio_cache_size
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, call), DirectReason::kLarge);
  call.cache_capacity = 0;  // a cache that keeps only what a request pins
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, call), DirectReason::kLarge);
  call.bytes = 0;  // nothing to move is never worth a call to MPI-IO
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, call), DirectReason::kCached);
}

TEST(DirectPolicyTest, StorageAboutAsFastAsACopyGoesDirect) {
  DirectPolicy policy;
  // tmpfs and a warm page cache: 1 to 2 copies' time per byte, 6 to 7 into fresh pages.
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(40 * 1024, 1.4 * kCopy)),
            DirectReason::kFastStorage);
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(40 * 1024, 6.4 * kCopy)),
            DirectReason::kFastStorage);
  // From 1 GB/s down: slow enough that hiding it may pay for the copy.
  EXPECT_EQ(policy.Decide(DirectMode::kAuto,
                          Call(kMiB, DirectPolicy::FastStorageSecondsPerByte(kMiB))),
            DirectReason::kCached);
  // A parallel file system at 500 MB/s per request, the emulated 40 MB/s device.
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(40 * 1024, 2e-9)), DirectReason::kCached);
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(40 * 1024, 25e-9)), DirectReason::kCached);
}

// A stream as a file sees it: the decision of each call comes from what the storage requests
// before it showed.
TEST(DirectPolicyTest, AStreamFollowsTheStorageItFinds) {
  DirectPolicy policy;
  StorageSpeed speed;
  auto decide = [&](uint64_t bytes) {
    DirectCallFacts facts = Call(bytes, speed.SecondsPerByte(StorageDirection::kRead));
    return policy.Decide(DirectMode::kAuto, facts);
  };
  // Nothing timed yet: a probe.
  EXPECT_EQ(decide(kMiB), DirectReason::kProbe);
  // One small request is not a sample (a few are, below): still probing.
  speed.Record(StorageDirection::kRead, 4096, 4096 * 100 * kCopy);
  EXPECT_EQ(decide(kMiB), DirectReason::kProbe);
  // Block-sized fetches from a page cache: fast.
  for (int i = 0; i < 3; ++i) speed.Record(StorageDirection::kRead, kMiB, kMiB * 1.5 * kCopy);
  EXPECT_EQ(decide(kMiB), DirectReason::kFastStorage);
  // One slow request among fast ones (a busy core) changes nothing.
  speed.Record(StorageDirection::kRead, kMiB, kMiB * 50 * kCopy);
  EXPECT_EQ(decide(kMiB), DirectReason::kFastStorage);
  // The page cache lets the file go: once every recent request is slow, back to the cache.
  for (int i = 0; i < StorageSpeed::kWindow; ++i) {
    speed.Record(StorageDirection::kRead, kMiB, kMiB * 50 * kCopy);
  }
  EXPECT_EQ(decide(kMiB), DirectReason::kCached);
}

// A write of a block or more, on slow storage, with too little time outside stagio to write it
// back in: direct. Smaller writes (which the cache merges) and reads (which prefetching can
// overlap without time between calls) stay in the cache; fast storage is named as such first.
TEST(DirectPolicyTest, ABlockSizedWriteWithNoTimeToHideItGoesDirect) {
  DirectPolicy policy;
  const double slow = 25e-9;
  const double no_time = 0.01e-9, plenty = 50e-9;  // outside time per byte moved
  auto call = [&](bool write, uint64_t bytes, std::optional<double> storage,
                  std::optional<double> outside) {
    DirectCallFacts facts = Call(bytes, storage);
    facts.write = write;
    facts.block_size = kMiB;
    facts.outside_seconds_per_byte = outside;
    return policy.Decide(DirectMode::kAuto, facts);
  };
  EXPECT_EQ(call(true, kMiB, slow, no_time), DirectReason::kNoTimeToHide);
  EXPECT_EQ(call(true, 4 * kMiB, slow, no_time), DirectReason::kNoTimeToHide);
  EXPECT_EQ(call(true, kMiB, slow, plenty), DirectReason::kCached);
  EXPECT_EQ(call(true, kMiB, slow, std::nullopt), DirectReason::kCached);
  EXPECT_EQ(call(true, kMiB - 1, slow, no_time), DirectReason::kCached);
  EXPECT_EQ(call(false, 4 * kMiB, slow, no_time), DirectReason::kCached);
  EXPECT_EQ(call(true, kMiB, 0.2e-9, no_time), DirectReason::kFastStorage);
  EXPECT_EQ(call(true, kMiB, std::nullopt, no_time), DirectReason::kProbe);
  // The same bound as for storage: time outside that would not pay for ten copies.
  EXPECT_EQ(call(true, kMiB, slow, 0.9 * DirectPolicy::FastStorageSecondsPerByte(kMiB)),
            DirectReason::kNoTimeToHide);
  EXPECT_EQ(call(true, kMiB, slow, 1.1 * DirectPolicy::FastStorageSecondsPerByte(kMiB)),
            DirectReason::kCached);
}

// Writes that slow storage keeps in the cache are probed again, at gaps that double; reads
// are not (their fetches time the storage).
TEST(DirectPolicyTest, CachedWritesAreProbedAgainAtDoublingGaps) {
  const double slow = 25e-9;
  DirectPolicy writes, reads;
  std::vector<int> reprobes;
  for (int call = 0; call < 2000; ++call) {
    DirectCallFacts write = Call(kMiB, slow);
    write.write = true;
    const DirectReason reason = writes.Decide(DirectMode::kAuto, write);
    if (reason == DirectReason::kProbe) reprobes.push_back(call);
    else EXPECT_EQ(reason, DirectReason::kCached) << call;
    EXPECT_EQ(reads.Decide(DirectMode::kAuto, Call(kMiB, slow)), DirectReason::kCached);
  }
  // After 16 cached writes, then 32, 64, ... up to 1024.
  EXPECT_EQ(reprobes, (std::vector<int>{16, 49, 114, 243, 500, 1013}));
}

// A call too small to make a sample alone re-probes as many calls in a row as a sample takes.
TEST(DirectPolicyTest, ASmallWriteReprobesWithASampleWorthOfCalls) {
  DirectPolicy policy;
  std::vector<DirectReason> reasons;
  for (int call = 0; call < 24; ++call) {
    DirectCallFacts write = Call(40 * 1024, 25e-9);
    write.write = true;
    reasons.push_back(policy.Decide(DirectMode::kAuto, write));
  }
  for (int call = 0; call < 24; ++call) {
    const bool probe = call >= 16 && call < 16 + StorageSpeed::kSmallRequestsPerSample;
    EXPECT_EQ(reasons[call], probe ? DirectReason::kProbe : DirectReason::kCached) << call;
  }
}

// A rank whose first probes met a busy moment: its writes stay cached only until a re-probe
// times the storage as it is.
TEST(DirectPolicyTest, AnUnluckyProbeIsCorrectedByAReprobe) {
  DirectPolicy policy;
  StorageSpeed speed;
  speed.Record(StorageDirection::kWrite, kMiB, kMiB * 30 * kCopy);  // slow, once
  std::vector<DirectReason> reasons;
  for (int call = 0; call < 40; ++call) {
    DirectCallFacts write = Call(kMiB, speed.SecondsPerByte(StorageDirection::kWrite));
    write.write = true;
    reasons.push_back(policy.Decide(DirectMode::kAuto, write));
    if (reasons.back() != DirectReason::kCached) {
      speed.Record(StorageDirection::kWrite, kMiB, kMiB * 2 * kCopy);  // tmpfs as it is
    }
  }
  EXPECT_EQ(reasons[15], DirectReason::kCached);
  EXPECT_EQ(reasons[16], DirectReason::kProbe);
  for (int call = 17; call < 40; ++call) {
    EXPECT_EQ(reasons[call], DirectReason::kFastStorage) << call;
  }
}

// Fast reads (a page cache) do not hold the writes' re-probe gap at its shortest.
TEST(DirectPolicyTest, FastReadsDoNotResetTheWritesReprobeGap) {
  DirectPolicy policy;
  std::vector<int> reprobes;
  for (int call = 0; call < 600; ++call) {
    EXPECT_EQ(policy.Decide(DirectMode::kAuto, Call(kMiB, 0.2e-9)), DirectReason::kFastStorage);
    DirectCallFacts write = Call(kMiB, 25e-9);
    write.write = true;
    if (policy.Decide(DirectMode::kAuto, write) == DirectReason::kProbe) reprobes.push_back(call);
  }
  EXPECT_EQ(reprobes, (std::vector<int>{16, 49, 114, 243, 500}));
}

// A file that reads through the cache keeps its block-sized writes there with no time between
// calls: a direct write would drop what was prefetched for its reads.
TEST(DirectPolicyTest, AFileThatReadsThroughTheCacheKeepsItsWritesThere) {
  DirectPolicy policy;
  DirectCallFacts write = Call(kMiB, 25e-9);
  write.write = true;
  write.block_size = kMiB;
  write.outside_seconds_per_byte = 0.01e-9;
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, write), DirectReason::kNoTimeToHide);
  write.reads_through_cache = true;
  EXPECT_EQ(policy.Decide(DirectMode::kAuto, write), DirectReason::kCached);
}

TEST(StorageSpeedTest, KeepsTheFastestRecentRequestPerDirection) {
  StorageSpeed speed;
  EXPECT_FALSE(speed.SecondsPerByte(StorageDirection::kRead));
  EXPECT_FALSE(speed.SecondsPerByte(StorageDirection::kWrite));
  speed.Record(StorageDirection::kRead, kMiB, 0.004);
  speed.Record(StorageDirection::kRead, 2 * kMiB, 0.004);
  ASSERT_TRUE(speed.SecondsPerByte(StorageDirection::kRead));
  EXPECT_DOUBLE_EQ(*speed.SecondsPerByte(StorageDirection::kRead), 0.002 / kMiB);
  EXPECT_FALSE(speed.SecondsPerByte(StorageDirection::kWrite));
  speed.Record(StorageDirection::kWrite, kMiB, 0.001);
  EXPECT_DOUBLE_EQ(*speed.SecondsPerByte(StorageDirection::kWrite), 0.001 / kMiB);
}

TEST(StorageSpeedTest, SumsSmallRequestsIntoOneSample) {
  StorageSpeed speed;
  // Fewer than kSmallRequestsPerSample small requests, under kMinSampleBytes: no sample yet.
  for (int i = 0; i + 1 < StorageSpeed::kSmallRequestsPerSample; ++i) {
    speed.Record(StorageDirection::kWrite, 40 * 1024, 0.001);
  }
  EXPECT_FALSE(speed.SecondsPerByte(StorageDirection::kWrite));
  speed.Record(StorageDirection::kWrite, 40 * 1024, 0.003);
  ASSERT_TRUE(speed.SecondsPerByte(StorageDirection::kWrite));
  const double requests = StorageSpeed::kSmallRequestsPerSample;
  EXPECT_DOUBLE_EQ(*speed.SecondsPerByte(StorageDirection::kWrite),
                   (0.001 * (requests - 1) + 0.003) / (requests * 40 * 1024));
  // Fewer, larger pieces make a sample once they reach kMinSampleBytes.
  speed.Record(StorageDirection::kRead, StorageSpeed::kMinSampleBytes / 2, 1e-6);
  EXPECT_FALSE(speed.SecondsPerByte(StorageDirection::kRead));
  speed.Record(StorageDirection::kRead, StorageSpeed::kMinSampleBytes / 2, 1e-6);
  ASSERT_TRUE(speed.SecondsPerByte(StorageDirection::kRead));
  EXPECT_DOUBLE_EQ(*speed.SecondsPerByte(StorageDirection::kRead),
                   2e-6 / StorageSpeed::kMinSampleBytes);
}

TEST(StorageSpeedTest, AFileNotTimedYetTakesItsDevicesSpeedUntilItHasItsOwn) {
  DeviceSpeeds devices;
  StorageSpeed first;
  first.ShareWith(devices.For(7));
  first.Record(StorageDirection::kRead, kMiB, 0.0002);  // a page cache that holds the file
  StorageSpeed second;  // on the same device
  second.ShareWith(devices.For(7));
  StorageSpeed elsewhere;
  elsewhere.ShareWith(devices.For(8));
  ASSERT_TRUE(second.SecondsPerByte(StorageDirection::kRead));
  EXPECT_DOUBLE_EQ(*second.SecondsPerByte(StorageDirection::kRead), 0.0002 / kMiB);
  EXPECT_FALSE(second.SecondsPerByte(StorageDirection::kWrite));
  EXPECT_FALSE(elsewhere.SecondsPerByte(StorageDirection::kRead));
  // Its own samples win, even where the device saw faster ones (a file the page cache lost).
  second.Record(StorageDirection::kRead, kMiB, 0.02);
  EXPECT_DOUBLE_EQ(*second.SecondsPerByte(StorageDirection::kRead), 0.02 / kMiB);
  EXPECT_DOUBLE_EQ(*first.SecondsPerByte(StorageDirection::kRead), 0.0002 / kMiB);
  // A third file starts from the device's fastest recent sample.
  StorageSpeed third;
  third.ShareWith(devices.For(7));
  EXPECT_DOUBLE_EQ(*third.SecondsPerByte(StorageDirection::kRead), 0.0002 / kMiB);
}

TEST(StorageSpeedTest, ForgetsRequestsOlderThanTheWindowAndWaitsForSmallOnesToAddUp) {
  StorageSpeed speed;
  speed.Record(StorageDirection::kRead, kMiB, 0.001);  // fast, then pushed out
  for (int i = 0; i < StorageSpeed::kWindow; ++i) speed.Record(StorageDirection::kRead, kMiB, 0.01);
  EXPECT_DOUBLE_EQ(*speed.SecondsPerByte(StorageDirection::kRead), 0.01 / kMiB);
  speed.Record(StorageDirection::kRead, StorageSpeed::kMinSampleBytes - 1, 1e-9);
  EXPECT_DOUBLE_EQ(*speed.SecondsPerByte(StorageDirection::kRead), 0.01 / kMiB);
  speed.Record(StorageDirection::kRead, kMiB, -1);  // a clock that went back: not a sample
  EXPECT_DOUBLE_EQ(*speed.SecondsPerByte(StorageDirection::kRead), 0.01 / kMiB);
}

}  // namespace
}  // namespace stagio
