/* A compound literal of pointer type points where its value does: memset through it would
 * write the global log, which the main thread uses. */
/* refused: memset is passed, as argument 1, a pointer to memory the main thread may use */
#include <mpi.h>
#include <string.h>

char log_line[64];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  char buffer[8];
  long offset = 0;
  for (int i = 0; i < 4; ++i) {
    const char *cleared = memset((char *){log_line}, 0, 1);
    offset += cleared[0] + 8;
    MPI_File_read_at(file, offset, buffer, 8, MPI_BYTE, MPI_STATUS_IGNORE);
  }
  MPI_File_close(&file);
  MPI_Finalize();
  return 0;
}
