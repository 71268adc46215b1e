/* A goto back into the reads would run the helper's start twice. */
/* refused: jumps into the part of main the helper would cover */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  char buffer[8];
  int pass = 0;
again:
  MPI_File_read_at(file, pass * 8, buffer, 8, MPI_BYTE, MPI_STATUS_IGNORE);
  if (++pass < 2) goto again;
  MPI_File_close(&file);
  MPI_Finalize();
  return 0;
}
