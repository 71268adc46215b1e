/* split_collectives: the begin/end forms of collective data access (MPI 4.0 section 14.4.5).
 *
 * The data moves between begin and end; end's status counts what was transferred; the explicit
 * offset, individual pointer and ordered forms each put their data where the blocking form
 * would; and the individual pointer moves by what begin asked for.
 */
#include "conformance.h"

enum { kRecord = 3001 };

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "split_collectives");
  MPI_File file;
  if (!conf_create("split.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;
  unsigned char out[kRecord], in[kRecord];
  MPI_Status status;
  const MPI_Offset mine = (MPI_Offset)conf.rank * kRecord;
  const MPI_Offset block = (MPI_Offset)conf.nranks * kRecord;  // one record of every rank

  /* write_at_all_begin/end, then read_at_all_begin/end, in block 0. */
  conf_fill(out, kRecord, conf.rank, mine);
  err = MPI_File_write_at_all_begin(file, mine, out, kRecord, MPI_BYTE);
  int end_err = MPI_File_write_at_all_end(file, out, &status);
  conf_check("write_at_all_end_count",
             err == MPI_SUCCESS && end_err == MPI_SUCCESS && conf_bytes(&status) == kRecord,
             conf_observed("%d", conf_bytes(&status)), "begin %s, end %s, %d bytes",
             conf_class_name(err), conf_class_name(end_err), conf_bytes(&status));
  const int neighbour = (conf.rank + 1) % conf.nranks;
  const MPI_Offset theirs = (MPI_Offset)neighbour * kRecord;
  conf_sync_barrier_sync(file);
  memset(in, 0, sizeof in);
  err = MPI_File_read_at_all_begin(file, theirs, in, kRecord, MPI_BYTE);
  end_err = MPI_File_read_at_all_end(file, in, &status);
  int64_t wrong = conf_mismatch(in, kRecord, neighbour, theirs);
  conf_check("read_at_all_neighbours_record",
             err == MPI_SUCCESS && end_err == MPI_SUCCESS && wrong < 0 &&
                 conf_bytes(&status) == kRecord,
             conf_observed("%d", conf_bytes(&status)), "begin %s, end %s, first wrong %lld",
             conf_class_name(err), conf_class_name(end_err), (long long)wrong);

  /* write_all_begin/end through the individual pointer, in block 1. */
  MPI_File_seek(file, block + mine, MPI_SEEK_SET);
  conf_fill(out, kRecord, conf.rank, block + mine);
  err = MPI_File_write_all_begin(file, out, kRecord, MPI_BYTE);
  end_err = MPI_File_write_all_end(file, out, &status);
  MPI_Offset position = -1;
  MPI_File_get_position(file, &position);
  conf_check("write_all_moves_pointer",
             err == MPI_SUCCESS && end_err == MPI_SUCCESS && position == block + mine + kRecord,
             NULL, "begin %s, end %s, position %lld", conf_class_name(err),
             conf_class_name(end_err), (long long)position);
  conf_sync_barrier_sync(file);
  MPI_File_seek(file, block + theirs, MPI_SEEK_SET);
  err = MPI_File_read_all_begin(file, in, kRecord, MPI_BYTE);
  end_err = MPI_File_read_all_end(file, in, &status);
  wrong = conf_mismatch(in, kRecord, neighbour, block + theirs);
  conf_check("read_all_neighbours_record",
             err == MPI_SUCCESS && end_err == MPI_SUCCESS && wrong < 0 &&
                 conf_bytes(&status) == kRecord,
             conf_observed("%d", conf_bytes(&status)), "begin %s, end %s, first wrong %lld",
             conf_class_name(err), conf_class_name(end_err), (long long)wrong);

  /* Ordered: block 2 holds the records in rank order. */
  MPI_File_seek_shared(file, 2 * block, MPI_SEEK_SET);
  conf_fill(out, kRecord, conf.rank, 2 * block + mine);
  err = MPI_File_write_ordered_begin(file, out, kRecord, MPI_BYTE);
  end_err = MPI_File_write_ordered_end(file, out, &status);
  conf_check("write_ordered_end_count",
             err == MPI_SUCCESS && end_err == MPI_SUCCESS && conf_bytes(&status) == kRecord,
             conf_observed("%d", conf_bytes(&status)), "begin %s, end %s",
             conf_class_name(err), conf_class_name(end_err));
  conf_sync_barrier_sync(file);
  err = MPI_File_read_at(file, 2 * block + theirs, in, kRecord, MPI_BYTE, &status);
  wrong = conf_mismatch(in, kRecord, neighbour, 2 * block + theirs);
  conf_check("write_ordered_in_rank_order", err == MPI_SUCCESS && wrong < 0, NULL,
             "read %s, first wrong %lld", conf_class_name(err), (long long)wrong);
  MPI_File_seek_shared(file, 2 * block, MPI_SEEK_SET);
  err = MPI_File_read_ordered_begin(file, in, kRecord, MPI_BYTE);
  end_err = MPI_File_read_ordered_end(file, in, &status);
  wrong = conf_mismatch(in, kRecord, conf.rank, 2 * block + mine);
  conf_check("read_ordered_own_record", err == MPI_SUCCESS && end_err == MPI_SUCCESS && wrong < 0,
             NULL, "begin %s, end %s, first wrong %lld", conf_class_name(err),
             conf_class_name(end_err), (long long)wrong);

  /* A split read past the end of the file counts only what is there. */
  err = MPI_File_read_at_all_begin(file, 3 * block - kRecord / 2, in, kRecord, MPI_BYTE);
  end_err = MPI_File_read_at_all_end(file, in, &status);
  conf_check("read_past_end_count",
             err == MPI_SUCCESS && end_err == MPI_SUCCESS && conf_bytes(&status) == kRecord / 2,
             conf_observed("%d", conf_bytes(&status)), "begin %s, end %s, %d bytes",
             conf_class_name(err), conf_class_name(end_err), conf_bytes(&status));
  MPI_File_close(&file);
  return conf_end();
}
