/* The offsets sit in an array field of a struct; a global pointer gets the array (the field
 * decays to a pointer: an address inside the struct), and a function moves the first offset
 * through it. The call may change the offset the loop reads at: it is in the slice, and the
 * helper would write through a pointer it does not own. Left unchanged. */
/* refused: assigns memory the main thread may use */
#include <mpi.h>

struct plan {
  long starts[2];
};
static long *first;
static void advance(void) { *first += 4096; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  struct plan plan = {{0, 512}};
  first = plan.starts;
  char block[64];
  for (int i = 0; i < 8; ++i) {
    MPI_File_read_at(file, plan.starts[0], block, 64, MPI_BYTE, MPI_STATUS_IGNORE);
    advance();                                                      /* slice: keep */
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return block[0] & 1;
}
