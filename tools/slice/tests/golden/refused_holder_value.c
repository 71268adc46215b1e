/* A local pointer holds the offsets' address, and its value is handed on as it moves
 * (remember(cursor++)): the address leaves the function, so the offsets are not sealed in
 * their holder, and a function writing through the pointer remember kept may change them.
 * Its call is in the slice, and the helper would write through a pointer it does not own.
 * Left unchanged. */
/* refused: assigns memory the main thread may use */
#include <mpi.h>

static long *kept;
static void remember(long *at) { kept = at; }
static void skip_ahead(void) { *kept += 4096; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  long offsets[4] = {0, 8, 16, 24};
  long *cursor = offsets;
  remember(cursor++);
  char block[8];
  for (int i = 0; i < 4; ++i) {
    MPI_File_read_at(file, offsets[0], block, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    skip_ahead();                                                   /* slice: keep */
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return block[0] & 1;
}
