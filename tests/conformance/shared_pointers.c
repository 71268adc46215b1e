/* shared_pointers: the shared file pointer and ordered access (MPI 4.0 section 14.4.4).
 *
 * write_shared and read_shared move one pointer that all ranks of the group share, so that the
 * records of all ranks land (and are read) each exactly once, in some order; the ordered calls
 * do the same in rank order; seek_shared is collective and sets it for all; and none of them
 * moves the individual file pointers.
 */
#include "conformance.h"

enum { kRecord = 1000 };

/* Which rank wrote the record at `offset` (-1 if none did, wholly). */
static int record_writer(const unsigned char *record, MPI_Offset offset) {
  for (int writer = 0; writer < conf.nranks; writer++) {
    if (conf_mismatch(record, kRecord, writer, offset) < 0) return writer;
  }
  return -1;
}

/* Reads the whole file on every rank and checks that each of the nranks records holds one
 * rank's bytes and every rank's record is there once; with `in_rank_order`, record r is rank
 * r's. Returns 1 if so. */
static int check_records(MPI_File file, int in_rank_order, char *why, size_t why_size) {
  const int64_t total = (int64_t)kRecord * conf.nranks;
  unsigned char *all = malloc(total);
  MPI_Status status;
  int err = MPI_File_read_at(file, 0, all, (int)total, MPI_BYTE, &status);
  int ok = err == MPI_SUCCESS && conf_bytes(&status) == total;
  snprintf(why, why_size, "read %s, %d bytes", conf_class_name(err), conf_bytes(&status));
  int *seen = calloc(conf.nranks, sizeof *seen);
  for (int r = 0; ok && r < conf.nranks; r++) {
    const int writer = record_writer(all + (int64_t)r * kRecord, (MPI_Offset)r * kRecord);
    if (writer < 0 || seen[writer]++ || (in_rank_order && writer != r)) {
      snprintf(why, why_size, "record %d was written by %d", r, writer);
      ok = 0;
    }
  }
  free(seen);
  free(all);
  return ok;
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "shared_pointers");
  MPI_File file;
  if (!conf_create("shared.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;
  char why[256] = "";
  unsigned char record[kRecord];
  MPI_Status status;
  MPI_Offset position = -1;

  err = MPI_File_get_position_shared(file, &position);
  conf_check("shared_pointer_starts_at_zero", err == MPI_SUCCESS && position == 0,
             conf_observed("%lld", (long long)position), "%s, position %lld",
             conf_class_name(err), (long long)position);

  /* write_ordered: record r is rank r's. */
  conf_fill(record, kRecord, conf.rank, (MPI_Offset)conf.rank * kRecord);
  err = MPI_File_write_ordered(file, record, kRecord, MPI_BYTE, &status);
  conf_check("write_ordered_count", err == MPI_SUCCESS && conf_bytes(&status) == kRecord,
             conf_observed("%d", conf_bytes(&status)), "%s, %d bytes", conf_class_name(err),
             conf_bytes(&status));
  int sync_err = conf_sync_barrier_sync(file);
  conf_check("write_ordered_in_rank_order", sync_err == MPI_SUCCESS && check_records(file, 1, why,
                                                                                     sizeof why),
             NULL, "%s", why);
  err = MPI_File_get_position_shared(file, &position);
  conf_check("shared_pointer_after_ordered", position == (MPI_Offset)kRecord * conf.nranks,
             conf_observed("%lld", (long long)position), "position %lld",
             (long long)position);

  /* The individual pointer did not move. */
  MPI_Offset individual = -1;
  MPI_File_get_position(file, &individual);
  conf_check("individual_pointer_unmoved", individual == 0,
             conf_observed("%lld", (long long)individual), "individual position %lld",
             (long long)individual);

  /* seek_shared is collective: back to 0, then read_ordered gives rank r record r. */
  err = MPI_File_seek_shared(file, 0, MPI_SEEK_SET);
  MPI_File_get_position_shared(file, &position);
  conf_check("seek_shared_to_start", err == MPI_SUCCESS && position == 0,
             conf_observed("%lld", (long long)position), "%s, position %lld",
             conf_class_name(err), (long long)position);
  memset(record, 0, sizeof record);
  err = MPI_File_read_ordered(file, record, kRecord, MPI_BYTE, &status);
  int64_t wrong = conf_mismatch(record, kRecord, conf.rank, (MPI_Offset)conf.rank * kRecord);
  conf_check("read_ordered_in_rank_order",
             err == MPI_SUCCESS && wrong < 0 && conf_bytes(&status) == kRecord, NULL,
             "%s, %d bytes, first wrong byte %lld", conf_class_name(err), conf_bytes(&status),
             (long long)wrong);

  /* read_shared: each rank reads one record; together they read each once. */
  MPI_File_seek_shared(file, 0, MPI_SEEK_SET);
  err = MPI_File_read_shared(file, record, kRecord, MPI_BYTE, &status);
  int got = -1;
  for (int r = 0; r < conf.nranks && err == MPI_SUCCESS; r++) {
    if (conf_mismatch(record, kRecord, r, (MPI_Offset)r * kRecord) < 0) got = r;
  }
  int *gots = malloc(conf.nranks * sizeof *gots);
  MPI_Allgather(&got, 1, MPI_INT, gots, 1, MPI_INT, MPI_COMM_WORLD);
  int each_once = 1;
  for (int r = 0; r < conf.nranks; r++) {
    int times = 0;
    for (int q = 0; q < conf.nranks; q++) times += gots[q] == r;
    each_once &= times == 1;
  }
  free(gots);
  conf_check("read_shared_each_record_once", each_once, NULL,
             "this rank read record %d (%s)", got, conf_class_name(err));

  /* write_shared from a fresh start: the records land back to back, each once. The bytes of a
   * record depend on its offset, which the writer cannot know before; write the rank's number
   * in every byte instead and check the set. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_seek_shared(file, (MPI_Offset)kRecord * conf.nranks, MPI_SEEK_SET);
  memset(record, 'A' + conf.rank % 26, sizeof record);
  record[0] = (unsigned char)conf.rank;
  err = MPI_File_write_shared(file, record, kRecord, MPI_BYTE, &status);
  sync_err = conf_sync_barrier_sync(file);
  const int64_t total = (int64_t)kRecord * conf.nranks;
  unsigned char *all = malloc(total);
  int read_err = MPI_File_read_at(file, total, all, (int)total, MPI_BYTE, &status);
  int ok = err == MPI_SUCCESS && sync_err == MPI_SUCCESS && read_err == MPI_SUCCESS &&
           conf_bytes(&status) == total;
  int *count = calloc(conf.nranks, sizeof *count);
  for (int r = 0; ok && r < conf.nranks; r++) {
    const unsigned char *piece = all + (int64_t)r * kRecord;
    const int writer = piece[0];
    ok = writer < conf.nranks && count[writer]++ == 0;
    for (int i = 1; ok && i < kRecord; i++) ok = piece[i] == 'A' + writer % 26;
  }
  free(count);
  free(all);
  conf_check("write_shared_each_record_once", ok, NULL, "write %s, sync %s, read %s",
             conf_class_name(err), conf_class_name(sync_err), conf_class_name(read_err));
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has read the pointer's effects
  err = MPI_File_get_position_shared(file, &position);
  conf_check("shared_pointer_after_shared_writes", position == 2 * total,
             conf_observed("%lld", (long long)position), "position %lld",
             (long long)position);
  MPI_File_close(&file);
  return conf_end();
}
