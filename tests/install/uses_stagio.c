/* A program built against an installed stagio only: it links libstagio ahead of MPI and calls
 * the stagio.h API, as a program that steers stagio would.
 *
 *   uses_stagio FILE VERSION
 *
 * Checks that stagio is active (its wrappers came before MPI's), that the library is the
 * installed VERSION, and that every rank reads back what all ranks wrote through one
 * collective write. Prints "uses_stagio: ok" on rank 0 and exits 0, else says why and exits 1.
 */
#include <mpi.h>
#include <stagio/stagio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kPiece = 1 << 16 };

static int fail(int rank, const char *why) {
  fprintf(stderr, "uses_stagio: rank %d: %s\n", rank, why);
  return 1;
}

static int check(const char *path, const char *version, int rank, int size) {
  if (!stagio_is_active()) return fail(rank, "stagio is not active: not linked ahead of MPI?");
  if (strcmp(stagio_version(), version) != 0) return fail(rank, "not the installed version");
  char *mine = malloc(kPiece), *all = malloc((size_t)kPiece * size);
  for (int i = 0; i < kPiece; ++i) mine[i] = (char)(rank * 31 + i * 7);
  MPI_File file;
  if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                    &file) != MPI_SUCCESS) {
    return fail(rank, "open failed");
  }
  int bad = MPI_File_write_at_all(file, (MPI_Offset)rank * kPiece, mine, kPiece, MPI_BYTE,
                                  MPI_STATUS_IGNORE) != MPI_SUCCESS;
  bad |= MPI_File_sync(file) != MPI_SUCCESS;
  MPI_Barrier(MPI_COMM_WORLD);
  bad |= MPI_File_sync(file) != MPI_SUCCESS;
  bad |= MPI_File_read_at_all(file, 0, all, kPiece * size, MPI_BYTE, MPI_STATUS_IGNORE) !=
         MPI_SUCCESS;
  bad |= MPI_File_close(&file) != MPI_SUCCESS;
  if (bad) return fail(rank, "an MPI-IO call failed");
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i < kPiece; ++i) {
      if (all[(size_t)r * kPiece + i] != (char)(r * 31 + i * 7)) {
        return fail(rank, "read back other bytes than were written");
      }
    }
  }
  free(mine);
  free(all);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int failed = argc == 3 ? check(argv[1], argv[2], rank, size)
                               : fail(rank, "usage: uses_stagio FILE VERSION");
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !any_failed) printf("uses_stagio: ok (stagio %s)\n", stagio_version());
  MPI_Finalize();
  return any_failed;
}
