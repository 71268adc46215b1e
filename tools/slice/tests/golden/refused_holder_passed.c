/* sealed_holder.c, but summarize is handed the job that holds the settings' address, and it
 * counts its calls in a global. Writing a global, it is not a function that only writes what
 * its arguments point to and calls libraries; so it may write whatever it can learn the
 * address of, and it can learn the settings' from the job. As far as the slicer knows it may
 * change the settings the loop reads: its call is in the slice, the helper cannot make it
 * (it writes the global), and the program is left unchanged. */
/* refused: increments the global or static variable summaries */
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

static long summarize(char *block, int length, const struct job *job) {
  ++summaries;
  qsort(block, (size_t)length, 1, by_value);
  return block[0] + job->settings->count;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct settings settings = {4096L * rank, 8192, 12};
  struct job job = {&settings, MPI_FILE_NULL};
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &job.file);
  char block[512], scratch[64] = {0};
  long total = 0;
  for (int i = 0; i < job.settings->count; ++i) {
    const long offset = settings.first + i * settings.stride;
    MPI_File_read_at(job.file, offset, block, 512, MPI_BYTE, MPI_STATUS_IGNORE);
    total += block[0] + summarize(scratch, 64, &job);               /* slice: keep */
  }
  MPI_File_close(&job.file);
  printf("%ld\n", total);
  MPI_Finalize();
  return 0;
}
