/* status_counts: what a data-access call's status says (MPI 4.0 sections 3.2.5, 4.1.11,
 * 14.4.1).
 *
 * A read counts what it read, less than asked at the end of the file and nothing past it;
 * MPI_Get_count in a derived type is MPI_UNDEFINED when a partial instance was read, while
 * MPI_Get_elements counts the whole basic elements; a write counts what it wrote, in its
 * datatype; counts go through non-contiguous memory types; and MPI_STATUS_IGNORE is accepted.
 */
#include "conformance.h"

enum { kFile = 10000 };

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "status_counts");
  MPI_File file;
  if (!conf_create("counts.dat", &file)) return conf_end();
  int err = MPI_SUCCESS;
  static unsigned char data[kFile], back[kFile];
  MPI_Status status;
  conf_fill(data, kFile, 0, 0);
  if (conf.rank == 0) err = MPI_File_write_at(file, 0, data, kFile, MPI_BYTE, &status);
  conf_check("write_count", conf.rank != 0 || (err == MPI_SUCCESS && conf_bytes(&status) == kFile),
             NULL, "%s, %d bytes", conf_class_name(err), conf_bytes(&status));
  conf_sync_barrier_sync(file);

  err = MPI_File_read_at(file, kFile - 300, back, 1000, MPI_BYTE, &status);
  conf_check("read_across_end", err == MPI_SUCCESS && conf_bytes(&status) == 300,
             conf_observed("%d", conf_bytes(&status)), "%s, %d bytes", conf_class_name(err),
             conf_bytes(&status));
  err = MPI_File_read_at(file, kFile, back, 1000, MPI_BYTE, &status);
  conf_check("read_at_end", err == MPI_SUCCESS && conf_bytes(&status) == 0,
             conf_observed("%d", conf_bytes(&status)), "%s, %d bytes", conf_class_name(err),
             conf_bytes(&status));
  err = MPI_File_read_at(file, kFile + 5000, back, 1000, MPI_BYTE, &status);
  conf_check("read_past_end", err == MPI_SUCCESS && conf_bytes(&status) == 0,
             conf_observed("%d", conf_bytes(&status)), "%s, %d bytes", conf_class_name(err),
             conf_bytes(&status));

  /* Three ints per instance, 7 ints and 2 bytes left before the end: MPI_Get_count in the type
   * is MPI_UNDEFINED, MPI_Get_elements counts 7 ints. */
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  err = MPI_File_read_at(file, kFile - 30, back, 4, triple, &status);
  int count = -2, elements = -2;
  MPI_Get_count(&status, triple, &count);
  MPI_Get_elements(&status, triple, &elements);
  conf_check("partial_instance_count_undefined", err == MPI_SUCCESS && count == MPI_UNDEFINED,
             count == MPI_UNDEFINED ? "MPI_UNDEFINED" : conf_observed("%d", count),
             "%s, count %d", conf_class_name(err), count);
  conf_check("partial_instance_elements", err == MPI_SUCCESS && elements == 7,
             conf_observed("%d", elements), "%s, elements %d", conf_class_name(err), elements);

  /* A write in a derived memory type with holes counts instances. */
  MPI_Datatype strided;
  MPI_Type_vector(5, 3, 8, MPI_BYTE, &strided);  // 15 bytes out of a 35-byte extent
  MPI_Type_commit(&strided);
  const MPI_Offset mine = kFile + (MPI_Offset)conf.rank * 45;
  err = MPI_File_write_at_all(file, mine, data, 3, strided, &status);
  MPI_Get_count(&status, strided, &count);
  MPI_Get_elements(&status, strided, &elements);
  conf_check("write_count_in_derived_type", err == MPI_SUCCESS && count == 3 && elements == 45,
             conf_observed("%d %d", count, elements), "%s, count %d, elements %d",
             conf_class_name(err), count, elements);
  conf_sync_barrier_sync(file);
  memset(back, 0, sizeof back);
  err = MPI_File_read_at_all(file, mine, back, 3, strided, &status);
  int same = err == MPI_SUCCESS;
  for (int instance = 0; same && instance < 3; instance++) {
    for (int block = 0; block < 5; block++) {
      const int at = instance * 35 + block * 8;
      same = same && memcmp(back + at, data + at, 3) == 0;
    }
  }
  MPI_Get_count(&status, strided, &count);
  conf_check("read_count_in_derived_type", same && count == 3, conf_observed("%d", count),
             "%s, count %d", conf_class_name(err), count);

  /* A zero-count read, and MPI_STATUS_IGNORE. */
  err = MPI_File_read_at(file, 0, back, 0, triple, &status);
  MPI_Get_count(&status, triple, &count);
  conf_check("zero_count_read", err == MPI_SUCCESS && count == 0, conf_observed("%d", count),
             "%s, count %d", conf_class_name(err), count);
  err = MPI_File_read_at(file, 0, back, 100, MPI_BYTE, MPI_STATUS_IGNORE);
  conf_check("status_ignore", err == MPI_SUCCESS && memcmp(back, data, 100) == 0,
             conf_class_name(err), "%s", conf_class_name(err));

  /* Collective reads of different lengths per rank, some across the end of the file (the
   * strided writes above made it kFile + 45n bytes): each status counts its own. */
  const int length = 200 * (conf.rank + 1);
  const int left = 250 + 45 * conf.nranks;
  err = MPI_File_read_at_all(file, kFile - 250, back, length, MPI_BYTE, &status);
  const int expected = length < left ? length : left;
  conf_check("collective_counts_per_rank", err == MPI_SUCCESS && conf_bytes(&status) == expected,
             NULL, "%s, %d bytes, expected %d", conf_class_name(err), conf_bytes(&status),
             expected);
  MPI_Type_free(&triple);
  MPI_Type_free(&strided);
  MPI_File_close(&file);
  return conf_end();
}
