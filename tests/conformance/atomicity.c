/* atomicity: atomic mode and the sync-barrier-sync rule (MPI 4.0 sections 14.6.1, 14.6.10).
 *
 * In atomic mode a write is visible to every rank of the file's group as soon as it returns,
 * and concurrent writes to one region leave the bytes of exactly one of them (never a mix). In
 * nonatomic mode a write is visible to another rank after sync, barrier, sync. Each rule is
 * checked on a region that is larger than a cache block or a file-system stripe would be, so
 * that a library that breaks it up shows the mix.
 */
#include "conformance.h"

enum { kRegion = 3 * 1024 * 1024 + 17 };

/* The rank whose bytes fill `buffer` wholly, or -1 when they come from several ranks (or from
 * none). */
static int single_writer(const unsigned char *buffer, int64_t length, int64_t offset) {
  for (int writer = 0; writer < conf.nranks; writer++) {
    if (conf_mismatch(buffer, length, writer, offset) < 0) return writer;
  }
  return -1;
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "atomicity");
  unsigned char *mine = malloc(kRegion), *seen = malloc(kRegion);
  MPI_File file;
  if (!conf_create("atomic.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;

  int flag = -1;
  err = MPI_File_set_atomicity(file, 1);
  MPI_File_get_atomicity(file, &flag);
  conf_check("get_atomicity_after_set", err == MPI_SUCCESS && flag == 1,
             conf_observed("%d", flag), "set_atomicity(1): %s, get_atomicity says %d",
             conf_class_name(err), flag);

  /* One writer, then a barrier: every rank reads what it wrote, without sync. */
  MPI_Status status;
  const int writer = conf.nranks - 1;
  if (conf.rank == writer) {
    conf_fill(mine, kRegion, writer, 0);
    err = MPI_File_write_at(file, 0, mine, kRegion, MPI_BYTE, &status);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  memset(seen, 0, kRegion);
  int read_err = MPI_File_read_at(file, 0, seen, kRegion, MPI_BYTE, &status);
  int64_t wrong = conf_mismatch(seen, kRegion, writer, 0);
  conf_check("write_visible_after_barrier", err == MPI_SUCCESS && read_err == MPI_SUCCESS &&
                                                wrong < 0,
             NULL, "write %s, read %s, first stale byte at %lld", conf_class_name(err),
             conf_class_name(read_err), (long long)wrong);

  /* Every rank writes the same region at once: one rank's bytes win, wholly, and every rank
   * reads the same winner. */
  conf_fill(mine, kRegion, conf.rank, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  err = MPI_File_write_at(file, 0, mine, kRegion, MPI_BYTE, &status);
  MPI_Barrier(MPI_COMM_WORLD);
  read_err = MPI_File_read_at(file, 0, seen, kRegion, MPI_BYTE, &status);
  const int winner = single_writer(seen, kRegion, 0);
  conf_check("concurrent_writes_not_mixed", err == MPI_SUCCESS && read_err == MPI_SUCCESS &&
                                                winner >= 0,
             NULL, "write %s, read %s, the region holds bytes of several writes",
             conf_class_name(err), conf_class_name(read_err));
  int lowest = 0, highest = 0;
  MPI_Allreduce(&winner, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&winner, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  conf_check("every_rank_sees_one_winner", lowest == highest, NULL,
             "ranks read the bytes of writers %d to %d", lowest, highest);

  /* Nonatomic mode: sync, barrier, sync makes a write visible. */
  err = MPI_File_set_atomicity(file, 0);
  MPI_File_get_atomicity(file, &flag);
  conf_check("get_nonatomicity_after_set", err == MPI_SUCCESS && flag == 0,
             conf_observed("%d", flag), "set_atomicity(0): %s, get_atomicity says %d",
             conf_class_name(err), flag);
  const int second = 0;
  if (conf.rank == second) {
    conf_fill(mine, kRegion, second, 7);
    err = MPI_File_write_at(file, 7, mine, kRegion, MPI_BYTE, &status);
  }
  const int sync_err = conf_sync_barrier_sync(file);
  read_err = MPI_File_read_at(file, 7, seen, kRegion, MPI_BYTE, &status);
  wrong = conf_mismatch(seen, kRegion, second, 7);
  conf_check("sync_barrier_sync_makes_visible",
             err == MPI_SUCCESS && sync_err == MPI_SUCCESS && read_err == MPI_SUCCESS &&
                 wrong < 0,
             NULL, "write %s, sync %s, read %s, first stale byte at %lld", conf_class_name(err),
             conf_class_name(sync_err), conf_class_name(read_err), (long long)wrong);

  /* Atomic mode again, with collective writes of interleaved pieces: every piece lands. */
  MPI_File_set_atomicity(file, 1);
  enum { kPiece = 4099 };
  for (int piece = 0; piece < 8; piece++) {
    const MPI_Offset offset = ((MPI_Offset)piece * conf.nranks + conf.rank) * kPiece;
    conf_fill(mine, kPiece, conf.rank, offset);
    err = MPI_File_write_at_all(file, offset, mine, kPiece, MPI_BYTE, &status);
    if (err != MPI_SUCCESS) break;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int64_t stale = -1;
  for (int piece = 0; piece < 8 && err == MPI_SUCCESS && stale < 0; piece++) {
    const int owner = (conf.rank + 1) % conf.nranks;  // read a neighbour's pieces
    const MPI_Offset offset = ((MPI_Offset)piece * conf.nranks + owner) * kPiece;
    err = MPI_File_read_at(file, offset, seen, kPiece, MPI_BYTE, &status);
    if (conf_mismatch(seen, kPiece, owner, offset) >= 0) stale = offset;
  }
  conf_check("collective_writes_visible", err == MPI_SUCCESS && stale < 0, NULL,
             "%s, stale piece at %lld", conf_class_name(err), (long long)stale);
  MPI_File_close(&file);
  free(mine);
  free(seen);
  return conf_end();
}
