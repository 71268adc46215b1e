/* stagio demo: a small checkpoint/restart-style MPI-IO program that knows nothing of stagio.
 *
 * Each rank writes `phases` records of `record` bytes into a shared file (rank-interleaved, the
 * layout of a typical checkpoint), with a short compute phase between writes. Then every rank
 * reads back its neighbour's records through a strided file view, in 64 KiB pieces as a
 * restart often does, and the job checks every byte.
 * Run it plain and under LD_PRELOAD=libstagio.so: the output (checksums) must be identical, and
 * with STAGIO_SUMMARY=1 stagio says what it did.
 *
 *   usage: stagio_demo FILE [phases=16] [record_kib=1024] [compute_ms=20]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char message[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, message, &length);
    fprintf(stderr, "demo: %s failed: %s\n", what, message);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static void compute(int milliseconds) {
  struct timespec pause = {milliseconds / 1000, (long)(milliseconds % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

/* The byte a rank writes at position i of its phase p: easy to check, different everywhere. */
static unsigned char expected_byte(int rank, int phase, size_t i) {
  return (unsigned char)(rank * 31 + phase * 7 + i * 13 + (i >> 8));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: %s FILE [phases] [record_kib] [compute_ms]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char *path = argv[1];
  const int phases = argc > 2 ? atoi(argv[2]) : 16;
  const int record = (argc > 3 ? atoi(argv[3]) : 1024) * 1024;
  const int piece = record < 65536 ? record : 65536;
  const int compute_ms = argc > 4 ? atoi(argv[4]) : 20;

  MPI_File file;
  check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file),
        "open");
  unsigned char *buffer = malloc(record);
  double start = MPI_Wtime();

  /* Write phase: record p of rank r lands at ((p * size) + r) * record. */
  for (int phase = 0; phase < phases; ++phase) {
    for (int i = 0; i < record; ++i) buffer[i] = expected_byte(rank, phase, i);
    MPI_Offset offset = ((MPI_Offset)phase * size + rank) * record;
    check(MPI_File_write_at(file, offset, buffer, record, MPI_BYTE, MPI_STATUS_IGNORE), "write");
    compute(compute_ms);
  }
  check(MPI_File_sync(file), "sync");
  MPI_Barrier(MPI_COMM_WORLD);
  check(MPI_File_sync(file), "sync");
  double written = MPI_Wtime();

  /* Read phase: the neighbour's records, as one strided view, a piece per call. */
  int neighbour = (rank + 1) % size;
  MPI_Datatype strided;
  MPI_Type_vector(phases, record, record * size, MPI_BYTE, &strided);
  MPI_Type_commit(&strided);
  check(MPI_File_set_view(file, (MPI_Offset)neighbour * record, MPI_BYTE, strided, "native",
                          MPI_INFO_NULL), "set_view");
  long long wrong = 0;
  uint64_t checksum = 1469598103934665603ull;
  for (int phase = 0; phase < phases; ++phase) {
    for (int start_of_piece = 0; start_of_piece < record; start_of_piece += piece) {
      const int length = record - start_of_piece < piece ? record - start_of_piece : piece;
      check(MPI_File_read(file, buffer + start_of_piece, length, MPI_BYTE, MPI_STATUS_IGNORE),
            "read");
    }
    for (int i = 0; i < record; ++i) {
      if (buffer[i] != expected_byte(neighbour, phase, i)) ++wrong;
      checksum = (checksum ^ buffer[i]) * 1099511628211ull;
    }
    compute(compute_ms);
  }
  double read = MPI_Wtime();
  check(MPI_File_close(&file), "close");
  MPI_Type_free(&strided);
  free(buffer);

  long long total_wrong = 0;
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  /* One checksum over all ranks' checksums in rank order (XOR would let them cancel out). */
  uint64_t *checksums = rank == 0 ? malloc(sizeof(uint64_t) * size) : NULL;
  MPI_Gather(&checksum, 1, MPI_UINT64_T, checksums, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  uint64_t combined = 1469598103934665603ull;
  for (int r = 0; rank == 0 && r < size; ++r) combined = (combined ^ checksums[r]) * 1099511628211ull;
  free(checksums);
  if (rank == 0) {
    printf("demo: %d ranks wrote %d x %d KiB records each in %.3f s, read them back in %.3f s\n",
           size, phases, record / 1024, written - start, read - written);
    printf("demo: checksum %016llx, %lld wrong bytes\n", (unsigned long long)combined, total_wrong);
  }
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
