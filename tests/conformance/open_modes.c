/* open_modes: access modes of MPI_File_open and MPI_File_delete (MPI 4.0 sections 14.2.1,
 * 14.2.3, 14.2.4).
 *
 * MPI_MODE_EXCL refuses a file that exists (MPI_ERR_FILE_EXISTS) and creates one that does not;
 * MPI_MODE_DELETE_ON_CLOSE leaves the file usable while open and gone after close;
 * MPI_MODE_APPEND puts both file pointers at the end; MPI_File_get_amode gives back the mode;
 * MPI_MODE_SEQUENTIAL refuses explicit offsets; MPI_File_delete removes a file and refuses one
 * that does not exist.
 */
#include <unistd.h>

#include "conformance.h"

/* Whether DIR/name exists, as rank 0 sees it, on every rank. Collective. */
static int exists(const char *name) {
  int here = conf.rank == 0 ? access(conf_path(name), F_OK) == 0 : 0;
  MPI_Bcast(&here, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return here;
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "open_modes");
  conf_remove("modes.excl");
  conf_remove("modes.doc");
  conf_remove("modes.append");
  conf_remove("modes.seq");
  MPI_File file;
  MPI_Status status;
  unsigned char data[600], back[600];

  /* EXCL: creates a new file, then refuses it. */
  int err = conf_open("modes.excl", MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &file);
  conf_check("exclusive_creates_new_file", err == MPI_SUCCESS && exists("modes.excl"),
             conf_class_name(err), "%s", conf_class_name(err));
  int amode = -1;
  if (err == MPI_SUCCESS) {
    MPI_File_get_amode(file, &amode);
    MPI_File_close(&file);
  }
  conf_check("get_amode", amode == (MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY), NULL,
             "amode %d", amode);
  err = conf_open("modes.excl", MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL,
                  &file);
  int error_class = MPI_SUCCESS;
  if (err != MPI_SUCCESS) MPI_Error_class(err, &error_class);
  conf_check("exclusive_refuses_existing_file", error_class == MPI_ERR_FILE_EXISTS,
             conf_class_name(err), "%s", conf_class_name(err));
  if (err == MPI_SUCCESS) MPI_File_close(&file);

  /* DELETE_ON_CLOSE: usable while open, gone after close. */
  err = conf_open("modes.doc", MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &file);
  int64_t wrong = -1;
  if (err == MPI_SUCCESS) {
    conf_fill(data, sizeof data, conf.rank, conf.rank * (MPI_Offset)sizeof data);
    err = MPI_File_write_at_all(file, conf.rank * (MPI_Offset)sizeof data, data, sizeof data,
                                MPI_BYTE, &status);
    conf_sync_barrier_sync(file);
    const int neighbour = (conf.rank + 1) % conf.nranks;
    if (err == MPI_SUCCESS) {
      err = MPI_File_read_at(file, neighbour * (MPI_Offset)sizeof data, back, sizeof back,
                             MPI_BYTE, &status);
    }
    wrong = conf_mismatch(back, sizeof back, neighbour, neighbour * (MPI_Offset)sizeof data);
  }
  conf_check("delete_on_close_usable_while_open", err == MPI_SUCCESS && wrong < 0,
             conf_class_name(err), "%s, first wrong %lld", conf_class_name(err),
             (long long)wrong);
  if (err == MPI_SUCCESS) MPI_File_close(&file);
  conf_check("delete_on_close_removes_file", !exists("modes.doc"), NULL,
             "the file is still there after close");

  /* APPEND: both pointers start at the end. */
  if (conf.rank == 0) {
    FILE *f = fopen(conf_path("modes.append"), "wb");
    if (f) {
      fwrite(data, 1, 1234, f);
      fclose(f);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  err = conf_open("modes.append", MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &file);
  MPI_Offset individual = -1, shared = -1;
  if (err == MPI_SUCCESS) {
    MPI_File_get_position(file, &individual);
    MPI_File_get_position_shared(file, &shared);
    MPI_File_close(&file);
  }
  conf_check("append_pointers_at_end", err == MPI_SUCCESS && individual == 1234 && shared == 1234,
             conf_observed("%lld %lld", (long long)individual, (long long)shared),
             "%s, individual %lld, shared %lld", conf_class_name(err), (long long)individual,
             (long long)shared);

  /* SEQUENTIAL: explicit offsets are erroneous (MPI_ERR_UNSUPPORTED_OPERATION), the shared
   * pointer works. */
  err = conf_open("modes.seq", MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                  MPI_INFO_NULL, &file);
  conf_check("sequential_opens", err == MPI_SUCCESS, conf_class_name(err), "%s",
             conf_class_name(err));
  if (err == MPI_SUCCESS) {
    const int at_err = MPI_File_write_at(file, 0, data, 10, MPI_BYTE, &status);
    conf_check("sequential_refuses_explicit_offset", at_err != MPI_SUCCESS,
               conf_class_name(at_err), "write_at succeeded");
    err = MPI_File_write_ordered(file, data, 10, MPI_BYTE, &status);
    conf_check("sequential_write_ordered", err == MPI_SUCCESS && conf_bytes(&status) == 10,
               conf_class_name(err), "%s", conf_class_name(err));
    MPI_File_close(&file);
  }

  /* delete: removes the file; refuses one that does not exist. */
  err = MPI_SUCCESS;
  if (conf.rank == 0) err = MPI_File_delete(conf_path("modes.excl"), MPI_INFO_NULL);
  MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
  conf_check("delete_removes_file", err == MPI_SUCCESS && !exists("modes.excl"),
             conf_class_name(err), "%s", conf_class_name(err));
  err = MPI_File_delete(conf_path("modes.excl"), MPI_INFO_NULL);
  error_class = MPI_SUCCESS;
  if (err != MPI_SUCCESS) MPI_Error_class(err, &error_class);
  conf_check("delete_missing_file", error_class == MPI_ERR_NO_SUCH_FILE, conf_class_name(err),
             "%s", conf_class_name(err));
  return conf_end();
}
