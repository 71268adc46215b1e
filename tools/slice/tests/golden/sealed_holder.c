/* A local whose address sits only in a field of another local (a job pointing to its
 * settings), where that holder is only ever dereferenced in place, cannot be reached by any
 * function: the loop's call of summarize, which writes a global (so it may write whatever it
 * can learn the address of) and sorts with the C library's qsort, cannot write the settings,
 * so it stays out of the slice. refused_holder_passed.c hands it the job. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

struct settings {
  long first, stride;
  int count;
};
struct job {
  const struct settings *settings;
  MPI_File file;
};

static int by_value(const void *a, const void *b) {
  return *(const char *)a - *(const char *)b;
}

static long summaries = 0;

static long summarize(char *block, int length) {
  ++summaries;
  qsort(block, (size_t)length, 1, by_value);
  return block[0] + block[length - 1];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;                                                     /* slice: keep */
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);                             /* slice: keep */
  struct settings settings = {4096L * rank, 8192, 12};             /* slice: keep */
  struct job job = {&settings, MPI_FILE_NULL};                      /* slice: keep */
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &job.file); /* slice: keep */
  char block[512];
  long total = 0;                                                   /* slice: drop */
  for (int i = 0; i < job.settings->count; ++i) {                   /* slice: keep */
    const long offset = settings.first + i * settings.stride;      /* slice: keep */
    MPI_File_read_at(job.file, offset, block, 512, MPI_BYTE, MPI_STATUS_IGNORE); /* slice: keep */
    total += summarize(block, 512);                                 /* slice: drop */
  }
  MPI_File_close(&job.file);                                        /* slice: keep */
  printf("%ld\n", total);                                           /* slice: drop */
  MPI_Finalize();
  return 0;
}
