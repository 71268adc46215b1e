/* file_size: MPI_File_get_size, MPI_File_set_size and MPI_File_preallocate across ranks (MPI
 * 4.0 sections 14.2.5 to 14.2.7, 14.6.1).
 *
 * A new file is empty; after every rank wrote at its own offset and sync-barrier-sync, every
 * rank sees the size of the farthest write; set_size grows and shrinks the file for all ranks
 * (and a read past the new end counts only what is left); preallocate never shrinks; a write
 * of nothing changes nothing.
 */
#include "conformance.h"

enum { kStride = 10000, kLength = 777 };

/* Every rank's view of the size, and whether they all agree on `expected`. */
static void check_size(MPI_File file, const char *check, MPI_Offset expected) {
  MPI_Offset size = -1;
  const int err = MPI_File_get_size(file, &size);
  conf_check(check, err == MPI_SUCCESS && size == expected,
             conf_observed("%lld", (long long)size), "%s, size %lld, expected %lld",
             conf_class_name(err), (long long)size, (long long)expected);
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "file_size");
  MPI_File file;
  if (!conf_create("size.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;
  check_size(file, "new_file_is_empty", 0);

  unsigned char data[kLength], back[kLength];
  MPI_Status status;
  const MPI_Offset mine = (MPI_Offset)conf.rank * kStride + 100;
  conf_fill(data, kLength, conf.rank, mine);
  err = MPI_File_write_at(file, mine, data, kLength, MPI_BYTE, &status);
  MPI_Offset own = -1;
  MPI_File_get_size(file, &own);
  conf_check("writer_sees_own_write", err == MPI_SUCCESS && own >= mine + kLength, NULL,
             "%s, size %lld after writing up to %lld", conf_class_name(err), (long long)own,
             (long long)(mine + kLength));
  conf_sync_barrier_sync(file);
  const MPI_Offset farthest = (MPI_Offset)(conf.nranks - 1) * kStride + 100 + kLength;
  check_size(file, "every_rank_sees_farthest_write", farthest);

  err = MPI_File_set_size(file, farthest + 5000);
  conf_check("set_size_grows", err == MPI_SUCCESS, conf_class_name(err), "%s",
             conf_class_name(err));
  check_size(file, "size_after_growing", farthest + 5000);
  err = MPI_File_read_at(file, mine, back, kLength, MPI_BYTE, &status);
  conf_check("growing_keeps_data", err == MPI_SUCCESS &&
                                       conf_mismatch(back, kLength, conf.rank, mine) < 0,
             NULL, "%s", conf_class_name(err));

  /* Shrink into the last rank's record: a read of it counts only what is left. */
  const MPI_Offset cut = farthest - kLength / 2;
  err = MPI_File_set_size(file, cut);
  conf_check("set_size_shrinks", err == MPI_SUCCESS, conf_class_name(err), "%s",
             conf_class_name(err));
  check_size(file, "size_after_shrinking", cut);
  const MPI_Offset last = (MPI_Offset)(conf.nranks - 1) * kStride + 100;
  err = MPI_File_read_at(file, last, back, kLength, MPI_BYTE, &status);
  conf_check("read_after_shrinking_counts_what_is_left",
             err == MPI_SUCCESS && conf_bytes(&status) == cut - last &&
                 conf_mismatch(back, cut - last, conf.nranks - 1, last) < 0,
             conf_observed("%d", conf_bytes(&status)), "%s, %d bytes", conf_class_name(err),
             conf_bytes(&status));

  /* A write of nothing changes nothing, wherever it is. */
  err = MPI_File_write_at(file, cut + 100000, data, 0, MPI_BYTE, &status);
  conf_check("empty_write_count", err == MPI_SUCCESS && conf_bytes(&status) == 0,
             conf_observed("%d", conf_bytes(&status)), "%s", conf_class_name(err));
  conf_sync_barrier_sync(file);
  check_size(file, "empty_write_keeps_size", cut);

  /* Shrink to nothing and write again: the size follows. */
  err = MPI_File_set_size(file, 0);
  check_size(file, "set_size_zero", 0);
  if (conf.rank == 0) err = MPI_File_write_at(file, 50, data, 10, MPI_BYTE, &status);
  conf_sync_barrier_sync(file);
  check_size(file, "size_after_write_on_empty_file", 60);
  MPI_File_close(&file);

  /* Reopened, the file has the size it had at close. */
  err = conf_open("size.dat", MPI_MODE_RDWR, MPI_INFO_NULL, &file);
  if (err != MPI_SUCCESS) return conf_end();
  check_size(file, "size_after_reopen", 60);

  /* Preallocate: grows to at least the size asked for, never shrinks, keeps what was written.
   * Last, as plain Open MPI can go out of step here (docs/mpi-implementations.md). */
  err = MPI_File_preallocate(file, 4000);
  check_size(file, "preallocate_grows", 4000);
  err = MPI_File_preallocate(file, 10);
  conf_check("preallocate_smaller_succeeds", err == MPI_SUCCESS, conf_class_name(err), "%s",
             conf_class_name(err));
  check_size(file, "preallocate_never_shrinks", 4000);
  memset(back, 0, sizeof back);
  err = MPI_File_read_at(file, 50, back, 10, MPI_BYTE, &status);  // rank 0's bytes, from above
  conf_check("preallocate_keeps_data", err == MPI_SUCCESS && conf_mismatch(back, 10, 0, 100) < 0,
             NULL, "%s", conf_class_name(err));

  MPI_File_close(&file);
  return conf_end();
}
