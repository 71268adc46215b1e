/* Settings whose addresses go, through a table, to a function of the input that checks them
 * (it keeps no copy): as far as the slicer can tell, a function that may write anything may
 * write them. But the loop's call of summarize only writes what its argument points to and
 * calls the C library's qsort, and a library can reach only what it was handed (the block):
 * the call cannot change the settings, and stays out of the slice. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int count_negative(long *const *fields, int count) {
  int negative = 0;
  for (int i = 0; i < count; ++i) negative += *fields[i] < 0;
  return negative;
}

static int by_value(const void *a, const void *b) {
  return *(const char *)a - *(const char *)b;
}

static long summarize(char *block, int length) {
  qsort(block, (size_t)length, 1, by_value);
  return block[0] + block[length - 1];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;                                                     /* slice: keep */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);                             /* slice: keep */
  long first = 4096L + rank * 512L, stride = 8192;                  /* slice: keep */
  long *const fields[] = {&first, &stride};                         /* slice: drop */
  const int negative = count_negative(fields, 2);                   /* slice: drop */
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file); /* slice: keep */
  char block[256];
  long total = 0;                                                   /* slice: drop */
  for (int i = 0; i < 10; ++i) {                                    /* slice: keep */
    MPI_File_read_at(file, first + i * stride, block, 256, MPI_BYTE, MPI_STATUS_IGNORE); /* slice: keep */
    total += summarize(block, 256);                                 /* slice: drop */
  }
  MPI_File_close(&file);                                            /* slice: keep */
  printf("%ld %d\n", total, negative);                              /* slice: drop */
  MPI_Finalize();
  return 0;
}
