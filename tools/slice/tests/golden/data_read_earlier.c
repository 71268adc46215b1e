/* Offsets from data read earlier: the count and the table come from reads, whose data the
 * helper never has (its reads are prefetches), so the slice is cut at them and the helper
 * starts after them, with copies of both; the loop's reads are the helper's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  long count = 0;
  MPI_File_read_at(file, 0, &count, 1, MPI_LONG, MPI_STATUS_IGNORE);       /* slice: cut count */
  long *table = malloc(count * sizeof *table);
  MPI_File_read_at(file, 8, table, (int)count, MPI_LONG, MPI_STATUS_IGNORE); /* slice: cut table */
  char record[512];
  long sum = 0;                                                            /* slice: drop */
  for (long i = 0; i < count; ++i) {                                       /* slice: keep */
    MPI_File_read_at(file, 4096 + table[i] * 512, record, 512, MPI_BYTE,  /* slice: keep */
                     MPI_STATUS_IGNORE);
    sum += record[0];                                                      /* slice: drop */
  }
  MPI_File_close(&file);
  free(table);
  printf("%ld\n", sum);                                                    /* slice: drop */
  MPI_Finalize();
  return (int)(sum & 1);
}
