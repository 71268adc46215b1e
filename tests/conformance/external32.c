/* external32: the portable data representation (MPI 4.0 section 14.5.2).
 *
 * Through a view with datarep "external32", ints are stored big-endian, four bytes each, and
 * read back as the same native ints; the file's extent of an int is its external32 size; and
 * the same bytes read through a "native" view on a little-endian machine are the ints with
 * their bytes reversed. Open MPI's OMPIO does not support external32 (its set_view fails):
 * the runner knows that, and requires stagio to do no worse.
 */
#include "conformance.h"

enum { kInts = 1000 };

static int is_little_endian(void) {
  const int one = 1;
  return *(const unsigned char *)&one == 1;
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "external32");
  MPI_File file;
  if (!conf_create("external32.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;

  const MPI_Offset mine = (MPI_Offset)conf.rank * kInts * 4;
  err = MPI_File_set_view(file, mine, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
  conf_check("set_view", err == MPI_SUCCESS, conf_class_name(err), "%s", conf_class_name(err));
  if (err != MPI_SUCCESS) {
    MPI_File_close(&file);
    return conf_end();
  }

  MPI_Aint extent = -1;
  err = MPI_File_get_type_extent(file, MPI_INT, &extent);
  conf_check("type_extent_of_int", err == MPI_SUCCESS && extent == 4,
             conf_observed("%ld", (long)extent), "%s, extent %ld", conf_class_name(err),
             (long)extent);

  int values[kInts], back[kInts];
  for (int i = 0; i < kInts; i++) values[i] = 0x01020304 * (conf.rank + 1) + i * 0x10101;
  MPI_Status status;
  err = MPI_File_write_at_all(file, 0, values, kInts, MPI_INT, &status);
  int count = -1;
  MPI_Get_count(&status, MPI_INT, &count);
  conf_check("write_count", err == MPI_SUCCESS && count == kInts, conf_observed("%d", count),
             "%s, count %d", conf_class_name(err), count);
  conf_sync_barrier_sync(file);

  memset(back, 0, sizeof back);
  err = MPI_File_read_at_all(file, 0, back, kInts, MPI_INT, &status);
  conf_check("read_back_same_ints", err == MPI_SUCCESS && memcmp(back, values, sizeof back) == 0,
             NULL, "%s", conf_class_name(err));

  /* The bytes on disk are big-endian. */
  unsigned char raw[kInts * 4];
  err = MPI_File_set_view(file, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  if (err == MPI_SUCCESS) err = MPI_File_read_at(file, mine, raw, sizeof raw, MPI_BYTE, &status);
  int big_endian = err == MPI_SUCCESS;
  for (int i = 0; big_endian && i < kInts; i++) {
    const unsigned v = (unsigned)values[i];
    const unsigned char *b = raw + 4 * i;
    big_endian = b[0] == (v >> 24 & 0xff) && b[1] == (v >> 16 & 0xff) &&
                 b[2] == (v >> 8 & 0xff) && b[3] == (v & 0xff);
  }
  conf_check("stored_big_endian", big_endian, NULL, "%s, or the bytes are not big-endian",
             conf_class_name(err));

  /* Read as native ints, they are byte-swapped on a little-endian machine. */
  err = MPI_File_read_at(file, mine, back, kInts, MPI_INT, &status);
  int as_native = err == MPI_SUCCESS;
  for (int i = 0; as_native && i < kInts; i++) {
    const unsigned v = (unsigned)values[i];
    const unsigned swapped = (v >> 24) | (v >> 8 & 0xff00) | (v << 8 & 0xff0000) | (v << 24);
    as_native = (unsigned)back[i] == (is_little_endian() ? swapped : v);
  }
  conf_check("native_view_sees_representation", as_native, NULL, "%s", conf_class_name(err));
  MPI_File_close(&file);
  return conf_end();
}
