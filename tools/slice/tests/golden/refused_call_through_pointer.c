/* The loop advances through a function pointer; the function it holds writes the offset
 * through a global pointer. A call through a pointer may run any function of the input, so
 * it may change the offset: it is in the slice, and the helper cannot make such a call.
 * Left unchanged. */
/* refused: a call through a function pointer */
#include <mpi.h>

static long *cursor;
static void next_row(void) { *cursor += 4096; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  long offset = 0;
  cursor = &offset;
  void (*advance)(void) = next_row;
  char row[64];
  for (int i = 0; i < 8; ++i) {
    MPI_File_read_at(file, offset, row, 64, MPI_BYTE, MPI_STATUS_IGNORE);
    advance();                                                      /* slice: keep */
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return row[0] & 1;
}
