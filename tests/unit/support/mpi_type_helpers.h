// Helpers shared by the datatype unit tests (flattening, file views): an owner that frees a
// derived datatype, and an element-by-element comparison of extent lists.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "mpiio/flatten.h"

namespace stagio {
namespace test_support {

// Frees a derived type at scope exit.
struct OwnedType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  OwnedType() = default;
  OwnedType(const OwnedType&) = delete;
  OwnedType& operator=(const OwnedType&) = delete;
  ~OwnedType() {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
  MPI_Datatype* out() { return &type; }
  MPI_Datatype Commit() {
    MPI_Type_commit(&type);
    return type;
  }
};

inline std::string Describe(const std::vector<Extent>& extents) {
  std::string text;
  for (const Extent& extent : extents) {
    text += "{" + std::to_string(extent.offset) + "," + std::to_string(extent.length) + "} ";
  }
  return text;
}

// Same number of extents (else stops), then each offset and length equal.
inline void ExpectSameExtents(const std::vector<Extent>& actual,
                              const std::vector<Extent>& expected) {
  ASSERT_EQ(actual.size(), expected.size())
      << "actual " << Describe(actual) << "\nexpected " << Describe(expected);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].offset, expected[i].offset) << "extent " << i;
    EXPECT_EQ(actual[i].length, expected[i].length) << "extent " << i;
  }
}

}  // namespace test_support
}  // namespace stagio
