/* break, continue and an early return on lines of their own, under conditions that decide
 * which reads happen: the slice keeps them and their conditions. The last return runs
 * whatever the reads did, and is left out. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "data", MPI_MODE_RDONLY, MPI_INFO_NULL, &file); /* slice: keep */
  int stride = argc > 1 ? 3 : 2;                          /* slice: keep */
  double block[512];
  double sum = 0;                                         /* slice: drop */
  for (int i = 0; i < 64; ++i) {                          /* slice: keep */
    if (i % stride == 1)                                  /* slice: keep */
      continue;                                           /* slice: keep */
    if (i > 60)                                           /* slice: keep */
      break;                                              /* slice: keep */
    MPI_File_read_at(file, (MPI_Offset)i * 4096, block, 512, MPI_DOUBLE, MPI_STATUS_IGNORE); /* slice: keep */
    sum += block[0];                                      /* slice: drop */
  }
  if (argc > 2) {                                         /* slice: keep */
    MPI_File_close(&file);                                /* slice: keep */
    MPI_Finalize();
    return 1;                                             /* slice: keep */
  }
  MPI_File_read_at(file, 0, block, 512, MPI_DOUBLE, MPI_STATUS_IGNORE); /* slice: keep */
  MPI_File_close(&file);                                  /* slice: keep */
  printf("%.17g\n", sum);                                 /* slice: drop */
  MPI_Finalize();
  return sum > 0;                                         /* slice: drop */
}
