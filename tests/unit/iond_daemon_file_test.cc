// DaemonFile's prefetch depth: it starts at two client blocks (or --prefetch-blocks if less),
// halves on each block evicted unused, shrinks on each block a read fetched before its
// prefetch ran, grows by one block on each prefetched block used, and stays within
// [1, --prefetch-blocks]; 0 turns it off for good. The blocks are the client's: when a client
// block is several daemon blocks, their outcomes count once.
#include "iond/daemon_file.h"

#include <gtest/gtest.h>

#include <memory>

#include "storage/memory_driver.h"

namespace stagio {
namespace iond {
namespace {

class DaemonFilePrefetchTest : public ::testing::Test {
 protected:
  std::unique_ptr<DaemonFile> Open(uint64_t prefetch_blocks) {
    driver_.CreateFile("/f");
    std::unique_ptr<DriverFile> file;
    EXPECT_TRUE(driver_.Open("/f", OpenAccess::kReadOnly, &file).ok());
    return std::make_unique<DaemonFile>(1, FileIdentity{}, std::move(file), false, 4096, 0,
                                        prefetch_blocks);
  }
  // A file of --prefetch-blocks 8 whose prefetches were used until its depth reached 8.
  std::unique_ptr<DaemonFile> OpenAtFullDepth() {
    auto file = Open(8);
    for (int i = 0; i < 6; ++i) file->OnPrefetchOutcome(PrefetchOutcome::kUsedInTime);
    EXPECT_EQ(file->PrefetchDepthFor(), 8u);
    return file;
  }
  MemoryDriver driver_;
};

TEST_F(DaemonFilePrefetchTest, StartsAtTwoBlocksOrTheConfiguredDepth) {
  EXPECT_EQ(Open(4)->PrefetchDepthFor(), 2u);
  EXPECT_EQ(Open(1)->PrefetchDepthFor(), 1u);
}

TEST_F(DaemonFilePrefetchTest, WastedBlocksHalveItDownToOne) {
  auto file = OpenAtFullDepth();
  file->OnPrefetchOutcome(PrefetchOutcome::kWasted);
  EXPECT_EQ(file->PrefetchDepthFor(), 4u);
  file->OnPrefetchOutcome(PrefetchOutcome::kWasted);
  file->OnPrefetchOutcome(PrefetchOutcome::kWasted);
  file->OnPrefetchOutcome(PrefetchOutcome::kWasted);
  EXPECT_EQ(file->PrefetchDepthFor(), 1u);
}

TEST_F(DaemonFilePrefetchTest, OvertakenBlocksShrinkIt) {
  auto file = OpenAtFullDepth();
  file->OnPrefetchOutcome(PrefetchOutcome::kOvertaken);
  EXPECT_EQ(file->PrefetchDepthFor(), 6u);
}

TEST_F(DaemonFilePrefetchTest, UsedBlocksGrowItBackNoFurtherThanConfigured) {
  auto file = Open(4);
  file->OnPrefetchOutcome(PrefetchOutcome::kWasted);
  ASSERT_EQ(file->PrefetchDepthFor(), 1u);
  file->OnPrefetchOutcome(PrefetchOutcome::kUsedInTime);
  EXPECT_EQ(file->PrefetchDepthFor(), 2u);
  file->OnPrefetchOutcome(PrefetchOutcome::kUsedAfterWait);
  EXPECT_EQ(file->PrefetchDepthFor(), 3u);
  for (int i = 0; i < 10; ++i) file->OnPrefetchOutcome(PrefetchOutcome::kUsedInTime);
  EXPECT_EQ(file->PrefetchDepthFor(), 4u);
}

TEST_F(DaemonFilePrefetchTest, OutcomesCountPerClientBlockOfSeveralDaemonBlocks) {
  auto file = OpenAtFullDepth();
  // A client with blocks of 4 daemon blocks (16 KiB; the daemon's are 4 KiB).
  ASSERT_EQ(file->PrefetchDepthFor(16384), 8u);
  for (int i = 0; i < 4; ++i) file->OnPrefetchOutcome(PrefetchOutcome::kWasted);
  EXPECT_EQ(file->PrefetchDepthFor(16384), 4u) << "one client block wasted: halved once";
  for (int i = 0; i < 3; ++i) file->OnPrefetchOutcome(PrefetchOutcome::kUsedInTime);
  EXPECT_EQ(file->PrefetchDepthFor(16384), 4u) << "three quarters of a client block";
  file->OnPrefetchOutcome(PrefetchOutcome::kOvertaken);
  EXPECT_EQ(file->PrefetchDepthFor(16384), 4u) << "another kind of outcome counts apart";
  file->OnPrefetchOutcome(PrefetchOutcome::kUsedAfterWait);
  EXPECT_EQ(file->PrefetchDepthFor(16384), 5u) << "used after a wait is used";
  // Client blocks no larger than the daemon's: every outcome counts.
  file->OnPrefetchOutcome(PrefetchOutcome::kUsedInTime);
  EXPECT_EQ(file->PrefetchDepthFor(4096), 5u) << "the pending outcomes were in the old unit";
  file->OnPrefetchOutcome(PrefetchOutcome::kWasted);
  EXPECT_EQ(file->PrefetchDepthFor(1024), 3u);
}

TEST_F(DaemonFilePrefetchTest, ZeroStaysOff) {
  auto file = Open(0);
  EXPECT_EQ(file->PrefetchDepthFor(), 0u);
  for (int i = 0; i < 4; ++i) file->OnPrefetchOutcome(PrefetchOutcome::kUsedInTime);
  EXPECT_EQ(file->PrefetchDepthFor(), 0u);
}

}  // namespace
}  // namespace iond
}  // namespace stagio
