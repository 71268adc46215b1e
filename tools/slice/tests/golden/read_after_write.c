/* Read after write through the same file: both calls are criteria, the write becomes a
 * prefetch write (a dirty range the later read waits on), and the data written is not. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;                                                          /* slice: keep */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);                                  /* slice: keep */
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &file);
  int block[256];
  for (int step = 0; step < 8; ++step) {                                 /* slice: keep */
    const MPI_Offset at = ((MPI_Offset)rank * 8 + step) * sizeof block;  /* slice: keep */
    for (int i = 0; i < 256; ++i) block[i] = step * i;                   /* slice: drop */
    MPI_File_write_at(file, at, block, 256, MPI_INT, MPI_STATUS_IGNORE); /* slice: keep */
    MPI_File_read_at(file, at, block, 256, MPI_INT, MPI_STATUS_IGNORE);  /* slice: keep */
  }
  MPI_File_close(&file);
  printf("%d\n", block[0]);                                              /* slice: drop */
  MPI_Finalize();
  return block[0] & 1;
}
