/* nonblocking: nonblocking data access (MPI 4.0 sections 14.4.2 to 14.4.4).
 *
 * Several requests may be in flight at once and complete in any order through MPI_Wait,
 * MPI_Waitall or an MPI_Test loop; each request's status counts its own transfer; the
 * individual file pointer moves when the call starts, not when it completes; and the
 * nonblocking collectives (MPI-3.1) move data like their blocking forms.
 */
#include "conformance.h"

enum { kPieces = 6, kPiece = 2500 };

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "nonblocking");
  MPI_File file;
  if (!conf_create("nonblocking.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;
  static unsigned char out[kPieces][kPiece], in[kPieces][kPiece];
  MPI_Request requests[kPieces];
  MPI_Status statuses[kPieces], status;
  const MPI_Offset stride = (MPI_Offset)conf.nranks * kPiece;
  const MPI_Offset mine = (MPI_Offset)conf.rank * kPiece;

  /* Region 0: kPieces iwrite_at in flight at once, completed by MPI_Waitall. Piece p of rank r
   * is at p * stride + r * kPiece. */
  int start_err = MPI_SUCCESS;
  for (int p = 0; p < kPieces; p++) {
    conf_fill(out[p], kPiece, conf.rank, p * stride + mine);
    const int e = MPI_File_iwrite_at(file, p * stride + mine, out[p], kPiece, MPI_BYTE,
                                     &requests[p]);
    if (e != MPI_SUCCESS) start_err = e;
  }
  err = start_err == MPI_SUCCESS ? MPI_Waitall(kPieces, requests, statuses) : start_err;
  int counts_ok = err == MPI_SUCCESS;
  for (int p = 0; counts_ok && p < kPieces; p++) counts_ok = conf_bytes(&statuses[p]) == kPiece;
  conf_check("iwrite_at_waitall_counts", counts_ok, conf_class_name(err),
             "%s, or a status does not count %d bytes", conf_class_name(err), kPiece);

  /* A neighbour's pieces, read with kPieces iread_at completed by an MPI_Test loop each, in
   * reverse order. */
  conf_sync_barrier_sync(file);
  const int neighbour = (conf.rank + 1) % conf.nranks;
  const MPI_Offset theirs = (MPI_Offset)neighbour * kPiece;
  start_err = MPI_SUCCESS;
  for (int p = 0; p < kPieces; p++) {
    const int e = MPI_File_iread_at(file, p * stride + theirs, in[p], kPiece, MPI_BYTE,
                                    &requests[p]);
    if (e != MPI_SUCCESS) start_err = e;
  }
  int64_t wrong = -1;
  for (int p = kPieces - 1; p >= 0 && start_err == MPI_SUCCESS; p--) {
    int done = 0;
    while (!done && err == MPI_SUCCESS) err = MPI_Test(&requests[p], &done, &status);
    if (conf_bytes(&status) != kPiece || conf_mismatch(in[p], kPiece, neighbour,
                                                       p * stride + theirs) >= 0) {
      wrong = p;
    }
  }
  conf_check("iread_at_test_loop_data", start_err == MPI_SUCCESS && err == MPI_SUCCESS &&
                                            wrong < 0,
             NULL, "start %s, test %s, wrong piece %lld", conf_class_name(start_err),
             conf_class_name(err), (long long)wrong);

  /* The individual pointer moves at the start of iwrite, before the wait. */
  const MPI_Offset region1 = kPieces * stride;
  MPI_File_seek(file, region1 + mine, MPI_SEEK_SET);
  conf_fill(out[0], kPiece, conf.rank, region1 + mine);
  err = MPI_File_iwrite(file, out[0], kPiece, MPI_BYTE, &requests[0]);
  MPI_Offset position = -1;
  MPI_File_get_position(file, &position);
  if (err == MPI_SUCCESS) err = MPI_Wait(&requests[0], &status);
  conf_check("pointer_moves_at_start", err == MPI_SUCCESS && position == region1 + mine + kPiece,
             NULL, "%s, position before the wait %lld", conf_class_name(err),
             (long long)position);

  /* Nonblocking collectives: iwrite_at_all in region 2, iread_all of the neighbour's. */
  const MPI_Offset region2 = region1 + stride;
  conf_fill(out[1], kPiece, conf.rank, region2 + mine);
  err = MPI_File_iwrite_at_all(file, region2 + mine, out[1], kPiece, MPI_BYTE, &requests[1]);
  if (err == MPI_SUCCESS) err = MPI_Wait(&requests[1], &status);
  conf_check("iwrite_at_all_count", err == MPI_SUCCESS && conf_bytes(&status) == kPiece,
             conf_observed("%d", conf_bytes(&status)), "%s", conf_class_name(err));
  conf_sync_barrier_sync(file);
  MPI_File_seek(file, region2 + theirs, MPI_SEEK_SET);
  memset(in[1], 0, kPiece);
  err = MPI_File_iread_all(file, in[1], kPiece, MPI_BYTE, &requests[1]);
  if (err == MPI_SUCCESS) err = MPI_Wait(&requests[1], &status);
  wrong = conf_mismatch(in[1], kPiece, neighbour, region2 + theirs);
  conf_check("iread_all_neighbours_piece", err == MPI_SUCCESS && wrong < 0, NULL,
             "%s, first wrong %lld", conf_class_name(err), (long long)wrong);

  /* iwrite_all and iread_at_all in region 3, the reads overlapping the end of the file. */
  const MPI_Offset region3 = region2 + stride;
  MPI_File_seek(file, region3 + mine, MPI_SEEK_SET);
  conf_fill(out[2], kPiece, conf.rank, region3 + mine);
  err = MPI_File_iwrite_all(file, out[2], kPiece, MPI_BYTE, &requests[2]);
  if (err == MPI_SUCCESS) err = MPI_Wait(&requests[2], &status);
  conf_sync_barrier_sync(file);
  const MPI_Offset past = region3 + stride - kPiece / 3;  // the last third of the last piece
  err = err == MPI_SUCCESS ? MPI_File_iread_at_all(file, past, in[2], kPiece, MPI_BYTE,
                                                   &requests[2])
                           : err;
  if (err == MPI_SUCCESS) err = MPI_Wait(&requests[2], &status);
  conf_check("iread_at_all_past_end_count", err == MPI_SUCCESS &&
                                                conf_bytes(&status) == kPiece / 3,
             conf_observed("%d", conf_bytes(&status)), "%s, %d bytes", conf_class_name(err),
             conf_bytes(&status));

  /* A request completed by MPI_Wait is MPI_REQUEST_NULL; waiting on it again is a no-op. */
  err = MPI_Wait(&requests[2], &status);
  conf_check("wait_on_completed_request", err == MPI_SUCCESS && requests[2] == MPI_REQUEST_NULL,
             conf_class_name(err), "%s", conf_class_name(err));
  MPI_File_close(&file);
  return conf_end();
}
