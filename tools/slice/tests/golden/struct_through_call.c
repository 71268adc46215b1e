/* Offsets in a struct that a helper function fills through a pointer, and a loop that may
 * stop early: the call that writes the struct and the test that ends the loop are in the
 * slice; the sum over the data is not. (Until the slicer goes across functions, the callee is
 * opaque: it may write any variable whose address escaped.) */
#include <mpi.h>
#include <stdio.h>

typedef struct {
  long offset;
  int length;
} extent;

static void plan(extent *e, int i) {
  e->offset = i * 8192L;
  e->length = i < 9 ? 4096 : 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file); /* slice: keep */
  char buffer[4096];
  long total = 0;                                         /* slice: drop */
  extent e;
  for (int i = 0; i < 10; ++i) {                          /* slice: keep */
    plan(&e, i);                                          /* slice: keep */
    if (e.length == 0) break;                             /* slice: keep */
    MPI_File_read_at(file, e.offset, buffer, e.length, MPI_BYTE, MPI_STATUS_IGNORE); /* slice: keep */
    total += buffer[0];                                   /* slice: drop */
  }
  MPI_File_close(&file);                                  /* slice: keep */
  printf("%ld\n", total);                                 /* slice: drop */
  MPI_Finalize();
  return (int)(total & 1);                                /* slice: drop */
}
