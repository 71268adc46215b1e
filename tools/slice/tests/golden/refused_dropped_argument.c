/* The index advances inside the buffer argument, which the prefetch call leaves out: the
 * helper's loop would never end. */
/* refused: that the prefetch call leaves out has side effects */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  int values[16];
  int i = 0;
  while (i < 16) MPI_File_read_at(file, 4 * i, &values[i++], 1, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_close(&file);
  MPI_Finalize();
  return values[0] & 1;
}
