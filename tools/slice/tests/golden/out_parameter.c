/* The offset advances in a helper function through a pointer: the write through the
 * parameter is what the loop's condition and the read need, so the call is in the slice. */
#include <mpi.h>
#include <stdio.h>

static void advance(long *offset, long step) { *offset = *offset + step; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  char buffer[64];
  long offset = 0, size = 4096;                                       /* slice: keep */
  while (offset < size) {                                             /* slice: keep */
    MPI_File_read_at(file, offset, buffer, 64, MPI_BYTE, MPI_STATUS_IGNORE); /* slice: keep */
    advance(&offset, 64);                                             /* slice: keep */
  }
  MPI_File_close(&file);
  printf("%d\n", buffer[0]); /* slice: drop */
  MPI_Finalize();
  return buffer[0] & 1;
}
