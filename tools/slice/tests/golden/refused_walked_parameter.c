/* A function that moves its pointer parameter along a list no longer writes what its caller
 * gave it: marking the nodes would write the main thread's list. */
/* refused: assigns memory the main thread may use */
#include <mpi.h>

struct node {
  struct node *next;
  int seen;
};
struct node list[3] = {{&list[1], 0}, {&list[2], 0}, {0, 0}};

static long count(struct node *n) {
  long found = 0;
  while (n) {
    n->seen = 1;
    n = n->next;
    ++found;
  }
  return found;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  char buffer[8];
  struct node head = {&list[0], 0};
  for (long k = 0; k < count(&head); ++k) {
    MPI_File_read_at(file, k * 8, buffer, 8, MPI_BYTE, MPI_STATUS_IGNORE);
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return 0;
}
