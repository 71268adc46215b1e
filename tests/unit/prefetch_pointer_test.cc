// PrefetchPointer: a pre-execution helper's own file pointer, in etypes of its view.
#include "preexec/prefetch_pointer.h"

#include <gtest/gtest.h>

namespace stagio {
namespace {

using From = PrefetchPointer::From;

TEST(PrefetchPointerTest, StartsWhereItIsPut) {
  EXPECT_EQ(PrefetchPointer().position(), 0);
  EXPECT_EQ(PrefetchPointer(42).position(), 42);
}

TEST(PrefetchPointerTest, AdvanceReturnsTheStartAndMovesPastTheAccess) {
  PrefetchPointer pointer(10);
  EXPECT_EQ(pointer.Advance(5), 10);
  EXPECT_EQ(pointer.position(), 15);
  EXPECT_EQ(pointer.Advance(0), 15) << "an empty access starts at the pointer";
  EXPECT_EQ(pointer.position(), 15);
  EXPECT_EQ(pointer.Advance(100), 15);
  EXPECT_EQ(pointer.position(), 115);
}

TEST(PrefetchPointerTest, SeekFromTheStart) {
  PrefetchPointer pointer(50);
  EXPECT_TRUE(pointer.Seek(7, From::kStart));
  EXPECT_EQ(pointer.position(), 7);
  EXPECT_TRUE(pointer.Seek(0, From::kStart));
  EXPECT_EQ(pointer.position(), 0);
}

TEST(PrefetchPointerTest, SeekFromTheCurrentPosition) {
  PrefetchPointer pointer(50);
  EXPECT_TRUE(pointer.Seek(-20, From::kCurrent));
  EXPECT_EQ(pointer.position(), 30);
  EXPECT_TRUE(pointer.Seek(5, From::kCurrent));
  EXPECT_EQ(pointer.position(), 35);
  EXPECT_TRUE(pointer.Seek(-35, From::kCurrent)) << "exactly to 0 is allowed";
  EXPECT_EQ(pointer.position(), 0);
}

TEST(PrefetchPointerTest, SeekFromTheEnd) {
  PrefetchPointer pointer(3);
  EXPECT_TRUE(pointer.Seek(-10, From::kEnd, 100));
  EXPECT_EQ(pointer.position(), 90);
  EXPECT_TRUE(pointer.Seek(25, From::kEnd, 100)) << "past the end of file is allowed";
  EXPECT_EQ(pointer.position(), 125);
}

TEST(PrefetchPointerTest, NegativeResultIsRejectedAndThePointerStays) {
  PrefetchPointer pointer(20);
  EXPECT_FALSE(pointer.Seek(-1, From::kStart));
  EXPECT_EQ(pointer.position(), 20);
  EXPECT_FALSE(pointer.Seek(-21, From::kCurrent));
  EXPECT_EQ(pointer.position(), 20);
  EXPECT_FALSE(pointer.Seek(-101, From::kEnd, 100));
  EXPECT_EQ(pointer.position(), 20);
  // Still usable afterwards.
  EXPECT_EQ(pointer.Advance(4), 20);
  EXPECT_EQ(pointer.position(), 24);
}

}  // namespace
}  // namespace stagio
