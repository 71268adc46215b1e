/* error_classes: a bad argument to an MPI-IO call is an error returned through the file's error
 * handler (MPI_ERRORS_RETURN by default for files, MPI 4.0 section 14.7), with a class that
 * says what was wrong, and the file stays usable.
 *
 * The observation of each check is the class the call returned; the standard names the class
 * for some cases (MPI_ERR_AMODE, MPI_ERR_NO_SUCH_FILE, MPI_ERR_FILE_EXISTS, MPI_ERR_READ_ONLY
 * or MPI_ERR_ACCESS) and leaves others to the library, so a check passes on any error, and the
 * runner requires stagio's class to be plain MPI's. All calls are independent ones, made by
 * every rank: an erroneous collective call may leave ranks out of step in some libraries.
 */
#include "conformance.h"

/* Passes when `err` is an error, observing its class. */
static void expect_error(const char *check, int err) {
  conf_check(check, err != MPI_SUCCESS, conf_class_name(err), "the call succeeded");
}

/* Passes when `err` is an error of one of the classes `a` or `b`. */
static void expect_class(const char *check, int err, int a, int b) {
  int error_class = MPI_SUCCESS;
  if (err != MPI_SUCCESS) MPI_Error_class(err, &error_class);
  conf_check(check, err != MPI_SUCCESS && (error_class == a || error_class == b),
             conf_class_name(err), "got %s", conf_class_name(err));
}

/* Passes when opening DIR/name with `amode` fails with `error_class`. */
static void expect_open_refused(const char *check, const char *name, int amode,
                                int error_class) {
  MPI_File file = MPI_FILE_NULL;
  const int err = conf_open(name, amode, MPI_INFO_NULL, &file);
  expect_class(check, err, error_class, error_class);
  if (err == MPI_SUCCESS) MPI_File_close(&file);
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "error_classes");
  conf_remove("errors.missing");

  enum { kBytes = 4096 };
  MPI_File file;
  if (!conf_create("errors.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;
  unsigned char data[kBytes], buffer[kBytes];
  conf_fill(data, kBytes, 0, 0);
  MPI_Status status;
  if (conf.rank == 0) MPI_File_write_at(file, 0, data, kBytes, MPI_BYTE, &status);
  conf_sync_barrier_sync(file);

  /* Data-access arguments. */
  expect_error("read_at_negative_count",
               MPI_File_read_at(file, 0, buffer, -1, MPI_BYTE, &status));
  expect_error("write_at_negative_count",
               MPI_File_write_at(file, 0, data, -5, MPI_BYTE, &status));
  expect_error("read_at_datatype_null",
               MPI_File_read_at(file, 0, buffer, 1, MPI_DATATYPE_NULL, &status));
  expect_error("write_at_negative_offset",
               MPI_File_write_at(file, -1, data, 1, MPI_BYTE, &status));
  expect_error("read_at_negative_offset",
               MPI_File_read_at(file, -4096, buffer, 1, MPI_BYTE, &status));
  MPI_Request request;
  expect_error("iread_at_negative_count",
               MPI_File_iread_at(file, 0, buffer, -1, MPI_BYTE, &request));

  MPI_Datatype uncommitted;
  MPI_Type_contiguous(4, MPI_BYTE, &uncommitted);
  expect_error("read_uncommitted_datatype",
               MPI_File_read_at(file, 0, buffer, 1, uncommitted, &status));
  MPI_Type_free(&uncommitted);

  /* Individual file pointer. */
  expect_error("seek_bad_whence", MPI_File_seek(file, 0, 12345));
  expect_error("seek_set_negative", MPI_File_seek(file, -1, MPI_SEEK_SET));
  expect_error("seek_cur_before_start", MPI_File_seek(file, -100, MPI_SEEK_CUR));

  /* The file is still usable, and what it holds is unchanged. */
  memset(buffer, 0, sizeof buffer);
  err = MPI_File_read_at(file, 0, buffer, kBytes, MPI_BYTE, &status);
  const int64_t wrong = conf_mismatch(buffer, kBytes, 0, 0);
  conf_check("usable_after_errors",
             err == MPI_SUCCESS && wrong < 0 && conf_bytes(&status) == kBytes, conf_class_name(err),
             "read back: %s, %d bytes, first wrong byte %lld", conf_class_name(err),
             conf_bytes(&status), (long long)wrong);
  MPI_File_close(&file);

  /* Access modes. */
  err = conf_open("errors.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  if (err == MPI_SUCCESS) {
    expect_class("write_to_read_only_file",
                 MPI_File_write_at(file, 0, data, 16, MPI_BYTE, &status), MPI_ERR_READ_ONLY,
                 MPI_ERR_ACCESS);
    MPI_File_close(&file);
  } else {
    conf_check("write_to_read_only_file", 0, "cannot open", "open read-only: %s",
               conf_class_name(err));
  }
  err = conf_open("errors.dat", MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
  if (err == MPI_SUCCESS) {
    expect_class("read_from_write_only_file",
                 MPI_File_read_at(file, 0, buffer, 16, MPI_BYTE, &status), MPI_ERR_ACCESS,
                 MPI_ERR_ACCESS);
    MPI_File_close(&file);
  } else {
    conf_check("read_from_write_only_file", 0, "cannot open", "open write-only: %s",
               conf_class_name(err));
  }

  /* Open: the standard names these classes. */
  expect_open_refused("open_missing_file", "errors.missing", MPI_MODE_RDONLY,
                      MPI_ERR_NO_SUCH_FILE);
  expect_open_refused("open_read_only_with_create", "errors.dat",
                      MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_ERR_AMODE);
  expect_open_refused("open_two_access_modes", "errors.dat", MPI_MODE_RDONLY | MPI_MODE_RDWR,
                      MPI_ERR_AMODE);
  expect_open_refused("open_exclusive_existing", "errors.dat",
                      MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_ERR_FILE_EXISTS);

  /* A view whose filetype is not made of whole etypes (MPI 4.0 section 14.3: "the filetype
   * must be derived from the etype"). */
  err = conf_open("errors.dat", MPI_MODE_RDWR, MPI_INFO_NULL, &file);
  if (err == MPI_SUCCESS) {
    MPI_Datatype three_bytes;
    MPI_Type_contiguous(3, MPI_BYTE, &three_bytes);
    MPI_Type_commit(&three_bytes);
    expect_error("view_filetype_not_of_etype",
                 MPI_File_set_view(file, 0, MPI_INT, three_bytes, "native", MPI_INFO_NULL));
    MPI_Type_free(&three_bytes);
    expect_error("view_unknown_datarep",
                 MPI_File_set_view(file, 0, MPI_BYTE, MPI_BYTE, "conformance-rep",
                                   MPI_INFO_NULL));
    MPI_File_close(&file);
  }
  return conf_end();
}
