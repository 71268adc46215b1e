/* Updates a shared file in place, pass after pass. The file is `blocks` blocks of 1024 ints;
 * block b belongs to rank b % size. In each pass every rank reads each of its blocks, adds to
 * every int a value that depends on the pass, the rank and the block, and writes the block
 * back; the ranks then agree on the pass's sum. The file's final bytes and the sums are the
 * result.
 *
 *   read_modify_write FILE [PASSES]   updates FILE, prints each pass's sum
 *   read_modify_write FILE create     writes a test file (rank 0, with stdio)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_INTS 1024
#define BLOCKS 40

static void create_input(const char *path) {
  FILE *out = fopen(path, "wb");
  for (int i = 0; out != NULL && i < BLOCKS * BLOCK_INTS; ++i) {
    int value = (i * 13) % 1000;
    fwrite(&value, sizeof value, 1, out);
  }
  if (out != NULL) fclose(out);
}

/* One block's update: a relaxation sweep repeated a few times, then an increment that
 * depends on the pass, the rank and the block. */
static long update(int *block, int pass, int rank, int index) {
  for (int sweep = 0; sweep < 32; ++sweep)
    for (int i = 1; i < BLOCK_INTS - 1; ++i) block[i] = (block[i - 1] + 2 * block[i] + block[i + 1]) / 4;
  long sum = 0;
  for (int i = 0; i < BLOCK_INTS; ++i) {
    block[i] += (pass + 1) * (rank + 1) + index % 7;
    sum += block[i];
  }
  return sum;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: %s FILE [PASSES|create]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  if (argc > 2 && strcmp(argv[2], "create") == 0) {
    if (rank == 0) create_input(argv[1]);
    MPI_Finalize();
    return 0;
  }
  const int passes = argc > 2 ? atoi(argv[2]) : 3;

  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDWR, MPI_INFO_NULL, &file);
  int *block = malloc(BLOCK_INTS * sizeof *block);
  const MPI_Offset block_bytes = BLOCK_INTS * sizeof *block;
  for (int pass = 0; pass < passes; ++pass) {
    long sum = 0;
    for (int b = rank; b < BLOCKS; b += size) {
      MPI_File_read_at(file, b * block_bytes, block, BLOCK_INTS, MPI_INT, MPI_STATUS_IGNORE);
      sum += update(block, pass, rank, b);
      MPI_File_write_at(file, b * block_bytes, block, BLOCK_INTS, MPI_INT, MPI_STATUS_IGNORE);
    }
    long total = 0;
    MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("pass %d sum %ld\n", pass, total);
  }
  MPI_File_close(&file);
  free(block);
  MPI_Finalize();
  return 0;
}
