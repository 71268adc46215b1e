// The daemon's descriptor budget: the soft RLIMIT_NOFILE is raised to the hard limit when the
// connection caps need more, and a hard limit below them is a warning, not a failure.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "iond/descriptor_limit.h"

namespace stagio {
namespace iond {
namespace {

TEST(IondDescriptorLimitTest, CapsAndReserveAddUp) {
  IondConfig config;
  EXPECT_EQ(DescriptorsNeeded(config), 4096u + 128u + kDescriptorReserve);
  config.max_connections = 10;
  config.max_unauthenticated = 5;
  EXPECT_EQ(DescriptorsNeeded(config), 15u + kDescriptorReserve);
}

TEST(IondDescriptorLimitTest, SoftLimitRisesToTheHardLimitOrWarns) {
  rlimit original{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &original), 0);
  if (original.rlim_max == RLIM_INFINITY || original.rlim_max < 2048) {
    GTEST_SKIP() << "needs a finite hard limit of at least 2048 descriptors";
  }
  EXPECT_TRUE(RaiseDescriptorLimit(64).empty()) << "enough already: nothing to do or say";

  rlimit lowered = original;
  lowered.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  std::vector<std::string> lines = RaiseDescriptorLimit(2000);
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, original.rlim_max);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "raised the descriptor limit (RLIMIT_NOFILE) from 1024 to " +
                          std::to_string(original.rlim_max));

  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  lines = RaiseDescriptorLimit(original.rlim_max + 1);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("warning: the descriptor limit is " +
                          std::to_string(original.rlim_max)),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("below the " + std::to_string(original.rlim_max + 1)),
            std::string::npos)
      << lines[1];
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &original), 0);
}

}  // namespace
}  // namespace iond
}  // namespace stagio
