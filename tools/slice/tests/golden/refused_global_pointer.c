/* A function counts through a global pointer into main's array, and the loop ends on that
 * count: the helper would have to make that write, into the main thread's array. */
/* refused: increments memory the main thread may use */
#include <mpi.h>

static int *counts;

static void count_hit(int k) { counts[k]++; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  int hits[2] = {0, 0};
  counts = hits;
  char buffer[8];
  while (hits[0] < 10) {
    MPI_File_read_at(file, hits[0] * 8, buffer, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    count_hit(0);
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return 0;
}
