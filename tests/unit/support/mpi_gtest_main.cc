// GoogleTest main for stagio's unit tests: several modules (datatype flattening, views) need
// MPI initialized, and initializing it for all of them costs nothing.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  int result = RUN_ALL_TESTS();
  MPI_Finalize();
  return result;
}
