/* Gathers the records an index lists. The file holds a table of record numbers, then the
 * records: an 8-byte count, `count` 8-byte record numbers, and 4 KiB records from the first
 * 4 KiB boundary after the table. Each rank reads the table, then every size-th record it
 * lists, and the ranks' checksums are summed on rank 0.
 *
 *   index_table FILE           prints the records read and their checksum
 *   index_table FILE create    writes a test file (rank 0, with stdio)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define RECORD_BYTES 4096
#define RECORDS 96
#define LISTED 64

/* A record's checksum, over several rounds of its bytes (the work done per record). */
static uint64_t checksum_of(const unsigned char *bytes, int length) {
  uint64_t sum = 1469598103934665603ull;
  for (int round = 0; round < 64; ++round)
    for (int i = 0; i < length; ++i) sum = (sum ^ (bytes[i] + round)) * 1099511628211ull;
  return sum;
}

static int create_input(const char *path) {
  FILE *out = fopen(path, "wb");
  if (out == NULL) return 1;
  int64_t count = LISTED;
  fwrite(&count, sizeof count, 1, out);
  for (int64_t i = 0; i < count; ++i) {
    int64_t record = (i * 37 + 11) % RECORDS;
    fwrite(&record, sizeof record, 1, out);
  }
  for (long at = 8 + 8 * LISTED; at < RECORD_BYTES; ++at) fputc(0, out);
  for (long i = 0; i < (long)RECORDS * RECORD_BYTES; ++i) fputc((int)((i * 7 + i / 4093) & 255), out);
  return fclose(out) != 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: %s FILE [create]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  if (argc > 2) {
    int failed = rank == 0 ? create_input(argv[1]) : 0;
    MPI_Finalize();
    return failed;
  }

  MPI_File file;
  if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &file) != MPI_SUCCESS) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int64_t count = 0;
  MPI_File_read_at(file, 0, &count, 1, MPI_INT64_T, MPI_STATUS_IGNORE);
  int64_t *table = malloc(count * sizeof *table);
  MPI_File_read_at(file, 8, table, (int)count, MPI_INT64_T, MPI_STATUS_IGNORE);
  const MPI_Offset data_start = (8 + 8 * count + RECORD_BYTES - 1) / RECORD_BYTES * RECORD_BYTES;

  unsigned char *record = malloc(RECORD_BYTES);
  uint64_t checksum = 0;
  long records = 0;
  for (int64_t i = rank; i < count; i += size) {
    const MPI_Offset offset = data_start + table[i] * RECORD_BYTES;
    MPI_File_read_at(file, offset, record, RECORD_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
    checksum += checksum_of(record, RECORD_BYTES);
    ++records;
  }
  MPI_File_close(&file);

  uint64_t total = 0;
  long all_records = 0;
  MPI_Reduce(&checksum, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&records, &all_records, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("records %ld checksum %llu\n", all_records, (unsigned long long)total);
  free(record);
  free(table);
  MPI_Finalize();
  return 0;
}
