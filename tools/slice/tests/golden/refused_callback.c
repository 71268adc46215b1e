/* A comparator handed to qsort counts its comparisons through a global pointer, which points
 * into the struct whose offset the loop reads at. The sort may run the comparator, so the
 * call of sort_records (on keys made in the loop) may change the offset: it is in the slice, and the helper cannot make
 * it (qsort is not in the input). Left unchanged. */
/* refused: qsort is not in the input, and its effects cannot be seen */
#include <mpi.h>
#include <stdlib.h>

struct progress {
  long offset;
  long compared;
};
static long *comparisons;

static int by_byte(const void *a, const void *b) {
  ++*comparisons;
  return *(const char *)a - *(const char *)b;
}

static void sort_records(char *records, int count) {
  qsort(records, (size_t)count, 1, by_byte);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  struct progress p = {0, 0};
  comparisons = &p.compared;
  char records[256], keys[16];
  for (int i = 0; i < 8; ++i) {
    MPI_File_read_at(file, p.offset, records, 256, MPI_BYTE, MPI_STATUS_IGNORE);
    for (int k = 0; k < 16; ++k) keys[k] = (char)(i * k % 7);
    sort_records(keys, 16);                                         /* slice: keep */
    p.offset += 4096;
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return (int)(p.compared & 1);
}
