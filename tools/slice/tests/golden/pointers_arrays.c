/* Pointers and arrays: offsets kept in a local array and reached through a pointer to a
 * struct; a write through a pointer to fresh memory (malloc) cannot change them, a write
 * through a pointer that holds the address of one of them can, and is in the slice. The
 * helper would make that write through its copy of the pointer, into the main thread's array:
 * the tool leaves this program unchanged (the slice is still reported).
 * refused: the helper's write through `second` (below). */
/* refused: assigns memory the main thread may use */
#include <mpi.h>
#include <stdlib.h>

typedef struct {
  long base;
  long stride;
  long reads;
} plan;

static void fill(double *values, int n) {
  for (int i = 0; i < n; ++i) values[i] = i;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  plan p = {1024, 512, 8};                                  /* slice: keep */
  plan *q = &p;                                             /* slice: keep */
  long starts[4] = {0, 100, 200, 300};                      /* slice: keep */
  long *second = &starts[1];                                /* slice: keep */
  double *scratch = malloc(64 * sizeof *scratch);           /* slice: drop */
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  char buffer[512];
  for (long k = 0; k < q->reads; ++k) {                     /* slice: keep */
    scratch[k % 64] = (double)k;                            /* slice: drop */
    fill(scratch, 64);                                      /* slice: drop */
    if (k == 5) *second = 700;                              /* slice: keep */
    const long offset = q->base + starts[k % 4] + k * q->stride; /* slice: keep */
    MPI_File_read_at(file, offset, buffer, 512, MPI_BYTE, MPI_STATUS_IGNORE); /* slice: keep */
  }
  q->stride = 0;                                            /* slice: drop */
  MPI_File_close(&file);
  free(scratch);
  MPI_Finalize();
  return buffer[0] & 1;
}
