/* The loop ends on a value a function returns: its returns are in its slice (the helper's
 * clone must return what the original does, or the helper's loop would not end). */
#include <mpi.h>
#include <stdio.h>

struct cursor {
  long at, end;
};

static int next_record(MPI_File file, struct cursor *c, char *record) {
  if (c->at >= c->end) return -1;                                        /* slice: keep */
  MPI_File_read_at(file, c->at, record, 8, MPI_BYTE, MPI_STATUS_IGNORE);  /* slice: keep */
  c->at += 8;                                                             /* slice: keep */
  return 0;                                                               /* slice: keep */
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  char record[8];
  long sum = 0;                                                           /* slice: drop */
  struct cursor c = {0, 64};                                              /* slice: keep */
  while (next_record(file, &c, record) == 0) sum += record[0];            /* slice: keep */
  MPI_File_close(&file);
  printf("%ld\n", sum);                                                   /* slice: drop */
  MPI_Finalize();
  return (int)(sum & 1);
}
