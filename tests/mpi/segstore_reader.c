/* A plain MPI program for the segment store's fault tests (segstore_faults.sh): it writes a
 * file whose every byte is a function of its offset and a generation number, or reads
 * scattered pieces of it and checks every byte against a generation, the way a viewer re-reads
 * the pieces of a zoom.
 *
 *   segstore_reader write FILE GENERATION   each rank writes its share of FILE
 *   segstore_reader read FILE GENERATION    each rank reads its pieces, in a scattered order
 *
 * Exits 1, naming the first wrong byte, if a read does not match. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBlock = 16 * 1024, kBlocks = 256, kPiece = 4096 };

static char Expected(long long offset, int generation) {
  return (char)((offset * 7 + offset / 4093 + generation * 101) % 251);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "read") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: segstore_reader write|read FILE GENERATION\n");
    MPI_Finalize();
    return 64;
  }
  const int writing = strcmp(argv[1], "write") == 0;
  const int generation = atoi(argv[3]);
  MPI_File file;
  int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
  if (MPI_File_open(MPI_COMM_WORLD, argv[2], amode, MPI_INFO_NULL, &file) != MPI_SUCCESS) {
    fprintf(stderr, "segstore_reader: cannot open %s\n", argv[2]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* buffer = malloc(kBlock);
  int wrong = 0;
  if (writing) {
    for (int block = rank; block < kBlocks; block += size) {
      const long long base = (long long)block * kBlock;
      for (int i = 0; i < kBlock; ++i) buffer[i] = Expected(base + i, generation);
      MPI_File_write_at(file, base, buffer, kBlock, MPI_BYTE, MPI_STATUS_IGNORE);
    }
  } else {
    /* Piece p of this rank is in block (p * 37 + rank * 5) % kBlocks, far from its
     * neighbours. */
    for (int p = 0; p < kBlocks / 4 && !wrong; ++p) {
      const int block = (p * 37 + rank * 5) % kBlocks;
      const long long offset = (long long)block * kBlock + (p % 3) * 1000;
      MPI_Status status;
      int count = -1;
      if (MPI_File_read_at(file, offset, buffer, kPiece, MPI_BYTE, &status) != MPI_SUCCESS ||
          MPI_Get_count(&status, MPI_BYTE, &count) != MPI_SUCCESS || count != kPiece) {
        fprintf(stderr, "segstore_reader: rank %d: read of %d bytes at %lld got %d\n", rank,
                kPiece, offset, count);
        wrong = 1;
        break;
      }
      for (int i = 0; i < kPiece; ++i) {
        if (buffer[i] != Expected(offset + i, generation)) {
          fprintf(stderr, "segstore_reader: rank %d: byte %lld is %d, generation %d has %d\n",
                  rank, offset + i, buffer[i], generation, Expected(offset + i, generation));
          wrong = 1;
          break;
        }
      }
    }
  }
  free(buffer);
  MPI_File_close(&file);
  int any_wrong = 0;
  MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !any_wrong) {
    printf("segstore_reader: %s generation %d: ok\n", argv[1], generation);
  }
  MPI_Finalize();
  return any_wrong;
}
