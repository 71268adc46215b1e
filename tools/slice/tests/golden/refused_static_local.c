/* A static local lives for the whole program: the helper cannot have its own copy. */
/* refused: the static variable extra */
#include <mpi.h>

static long limit(void) {
  static long extra = 3;
  return 4 + extra;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  char buffer[8];
  for (long k = 0; k < limit(); ++k) {
    MPI_File_read_at(file, k * 8, buffer, 8, MPI_BYTE, MPI_STATUS_IGNORE);
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return 0;
}
