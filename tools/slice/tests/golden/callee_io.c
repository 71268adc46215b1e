/* The read sits in a helper function: its slice needs the helper's offset and length
 * parameters, so each call of it is a criterion of main's slice for those arguments, and what
 * computes them in main is in the slice; the helper's buffer argument and the sum are not. */
#include <mpi.h>
#include <stdio.h>

static long checksum(const char *bytes, int length) {
  long sum = 0;
  for (int i = 0; i < length; ++i) sum += bytes[i];
  return sum;
}

static void read_piece(MPI_File file, long offset, char *into, int length) {
  MPI_File_read_at(file, offset, into, length, MPI_BYTE, MPI_STATUS_IGNORE); /* slice: keep */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;                                           /* slice: keep */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);                   /* slice: keep */
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file); /* slice: keep */
  char piece[1024];
  long total = 0;                                         /* slice: drop */
  const int pieces = 16;                                  /* slice: keep */
  for (int k = 0; k < pieces; ++k) {                      /* slice: keep */
    const long offset = ((long)rank * pieces + k) * 4096; /* slice: keep */
    read_piece(file, offset, piece, 1024);                /* slice: keep */
    total += checksum(piece, 1024);                       /* slice: drop */
  }
  MPI_File_close(&file);                                  /* slice: keep */
  printf("%ld\n", total);                                 /* slice: drop */
  MPI_Finalize();
  return (int)(total & 1);                                /* slice: drop */
}
