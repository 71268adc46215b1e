/* Rows chosen by rank, read at offsets computed in the loop: the slice keeps what decides the
 * offsets and which iterations read, and drops the work on the data. The row count comes from
 * a broadcast: the slice cannot follow it (the helper must not communicate). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;                                  /* slice: keep */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);                    /* slice: keep */
  MPI_Comm_size(MPI_COMM_WORLD, &size);                    /* slice: keep */
  int rows = 100;                                          /* slice: keep */
  MPI_Bcast(&rows, 1, MPI_INT, 0, MPI_COMM_WORLD);         /* slice: cut rows */
  const long row_bytes = 4096;                             /* slice: keep */
  long unrelated = 0;                                      /* slice: drop */
  char *buffer = malloc(row_bytes);                        /* slice: drop */
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file); /* slice: keep */
  for (int i = 0; i < rows; ++i) {                         /* slice: keep */
    unrelated += i * 3;                                    /* slice: drop */
    if (i % size != rank) continue;                        /* slice: keep */
    long offset = (long)i * row_bytes;                     /* slice: keep */
    MPI_File_read_at(file, offset, buffer, (int)row_bytes, MPI_BYTE, MPI_STATUS_IGNORE); /* slice: keep */
    unrelated += buffer[0];                                /* slice: drop */
  }
  MPI_File_close(&file);                                   /* slice: keep */
  free(buffer);                                            /* slice: drop */
  printf("%ld\n", unrelated);                              /* slice: drop */
  MPI_Finalize();
  return (int)(unrelated & 1);                             /* slice: drop */
}
