/* c_only: an MPI-IO program that uses only the MPI 4 large-count (_c) data access calls.
 *
 *   c_only --seeds A:B --dir DIR --log PREFIX
 *
 * For each seed: every rank writes its own areas of DIR/c_only_<seed>.dat with every _c write
 * flavor (explicit offset, individual and shared pointers; blocking, nonblocking, split;
 * independent and collective), reads its own data back, then after sync-barrier-sync reads
 * its neighbour's data and the whole file with every _c read flavor. Datatypes come from
 * _c constructors and are queried with _c functions. Everything read and every count goes
 * into PREFIX.<rank> (format: diff_log.h), and rank 0 appends the final file as POSIX sees
 * it, so run_differential.sh can compare a plain run with a run under libstagio.
 *
 * The _c-built types are contiguous memory types only: MPICH 4.0's ROMIO aborts on a
 * noncontiguous memory type or any filetype built with a _c constructor (it queries them with
 * MPI_Type_get_envelope), so plain MPICH could not serve as the reference for those.
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff_log.h"
#include "diff_program.h"

enum {
  KIND_READ = 1, /* the log's kind field: 1 read, 2 write, 3 scalar, 4 final file */
  KIND_WRITE = 2,
  KIND_SCALAR = 3,
  KIND_FINAL = 4
};

/* The current seed and step, for the log and for error messages. */
static int g_rank;
static unsigned g_seed;
static unsigned g_step;
static FILE *g_log;

static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  diffprog_vfail("c_only", g_rank, g_seed, g_step, format, args);
  va_end(args);
}

static void check(int code, const char *call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail("%s failed: %.*s", call, length, text);
}
#define CHECK(call) check((call), #call)

static void log_record(uint16_t type, uint16_t kind, int64_t value, const char *detail,
                       const void *payload, uint64_t length) {
  if (difflog_write(g_log, type, kind, g_seed, g_step, value, detail, payload, length) != 0) {
    fail("cannot write the log");
  }
}

static MPI_Count bytes_of(const MPI_Status *status) {
  MPI_Count count = 0;
  CHECK(MPI_Get_count_c(status, MPI_BYTE, &count));
  return count;
}

static void log_read(const char *what, const MPI_Status *status, const void *buffer,
                     MPI_Count length) {
  g_step++;
  log_record(DIFFLOG_READ, KIND_READ, bytes_of(status), what, buffer, (uint64_t)length);
}

static void log_write(const char *what, const MPI_Status *status, const void *buffer,
                      MPI_Count length) {
  g_step++;
  const uint64_t hash = difflog_hash(buffer, (uint64_t)length);
  log_record(DIFFLOG_WRITE, KIND_WRITE, bytes_of(status), what, &hash, sizeof hash);
}

static void log_scalar(const char *what, int64_t value) {
  g_step++;
  log_record(DIFFLOG_SCALAR, KIND_SCALAR, value, what, NULL, 0);
}

/* Deterministic data for (seed, rank, area). */
static void fill(unsigned char *buffer, MPI_Count length, unsigned salt) {
  uint64_t state = (uint64_t)g_seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)g_rank << 32) ^ salt;
  for (MPI_Count i = 0; i < length; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    buffer[i] = (unsigned char)(state >> 56);
  }
}

static void sentinel(unsigned char *buffer, MPI_Count length) {
  for (MPI_Count i = 0; i < length; i++) buffer[i] = (unsigned char)(0xA5 ^ (i * 29));
}

static void wait_or_test(MPI_Request *request, MPI_Status *status, int test_loop) {
  if (!test_loop) {
    CHECK(MPI_Wait(request, status));
    return;
  }
  int done = 0;
  while (!done) CHECK(MPI_Test(request, &done, status));
}

static void sync_barrier_sync(MPI_File file) {
  CHECK(MPI_File_sync(file));
  CHECK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(MPI_File_sync(file));
}

/* The file layout of one seed. Every area holds one chunk per rank, in rank order. */
typedef struct {
  int nranks;
  MPI_Count record;  /* bytes per record: the _c contiguous type */
  MPI_Count records; /* records per rank per area (a multiple of 6, split in parts below) */
  MPI_Count chunk;   /* record * records */
  MPI_Count area;    /* nranks * chunk */
} Layout;

static MPI_Offset chunk_at(const Layout *layout, int area, int rank) {
  return (MPI_Offset)(area * layout->area + rank * layout->chunk);
}

/* Areas 0..3 are written with explicit offsets and individual pointers, area 4 with the
 * shared pointer (write_ordered_c). Each rank then reads its own chunks back. */
static void write_phase(MPI_File file, const Layout *layout, MPI_Datatype record_type,
                        unsigned char *data, unsigned char *back) {
  const int rank = g_rank;
  const MPI_Count n = layout->records, third = n / 3, half = n / 2, r = layout->record;
  MPI_Status status;
  MPI_Request request;

  /* Area 0: one collective write. */
  fill(data, layout->chunk, 0);
  CHECK(MPI_File_write_at_all_c(file, chunk_at(layout, 0, rank), data, n, record_type, &status));
  log_write("write_at_all_c area 0", &status, data, layout->chunk);

  /* Area 1: individual pointer, nonblocking then blocking. */
  fill(data, layout->chunk, 1);
  CHECK(MPI_File_seek(file, chunk_at(layout, 1, rank), MPI_SEEK_SET));
  CHECK(MPI_File_iwrite_c(file, data, half, record_type, &request));
  wait_or_test(&request, &status, 0);
  log_write("iwrite_c area 1", &status, data, half * r);
  CHECK(MPI_File_write_c(file, data + half * r, n - half, record_type, &status));
  log_write("write_c area 1", &status, data + half * r, (n - half) * r);

  /* Area 2: explicit offsets, nonblocking, blocking and split collective. */
  fill(data, layout->chunk, 2);
  const MPI_Offset base2 = chunk_at(layout, 2, rank);
  CHECK(MPI_File_iwrite_at_c(file, base2, data, third, record_type, &request));
  wait_or_test(&request, &status, 1);
  log_write("iwrite_at_c area 2", &status, data, third * r);
  CHECK(MPI_File_write_at_c(file, base2 + third * r, data + third * r, third, record_type,
                            &status));
  log_write("write_at_c area 2", &status, data + third * r, third * r);
  CHECK(MPI_File_write_at_all_begin_c(file, base2 + 2 * third * r, data + 2 * third * r,
                                      n - 2 * third, record_type));
  CHECK(MPI_File_write_at_all_end(file, data + 2 * third * r, &status));
  log_write("write_at_all_begin_c area 2", &status, data + 2 * third * r, (n - 2 * third) * r);

  /* Area 3: nonblocking collective at an offset, then pointer-based collectives. */
  fill(data, layout->chunk, 3);
  const MPI_Offset base3 = chunk_at(layout, 3, rank);
  CHECK(MPI_File_iwrite_at_all_c(file, base3, data, third, record_type, &request));
  wait_or_test(&request, &status, 1);
  log_write("iwrite_at_all_c area 3", &status, data, third * r);
  CHECK(MPI_File_seek(file, base3 + third * r, MPI_SEEK_SET));
  CHECK(MPI_File_write_all_c(file, data + third * r, third, record_type, &status));
  log_write("write_all_c area 3", &status, data + third * r, third * r);
  CHECK(MPI_File_iwrite_all_c(file, data + 2 * third * r, n - 2 * third, record_type, &request));
  wait_or_test(&request, &status, 0);
  log_write("iwrite_all_c area 3", &status, data + 2 * third * r, (n - 2 * third) * r);
  CHECK(MPI_File_write_all_begin_c(file, data, 0, record_type)); /* count 0 is legal */
  CHECK(MPI_File_write_all_end(file, data, &status));
  log_write("write_all_begin_c count 0", &status, data, 0);

  /* Area 4: the shared file pointer puts the chunks in rank order. */
  fill(data, layout->chunk, 4);
  CHECK(MPI_File_seek_shared(file, chunk_at(layout, 4, 0), MPI_SEEK_SET));
  CHECK(MPI_File_write_ordered_c(file, data, n, record_type, &status));
  log_write("write_ordered_c area 4", &status, data, layout->chunk);

  /* Own data is visible at once. */
  for (int area = 0; area < 4; area++) {
    sentinel(back, layout->chunk);
    CHECK(MPI_File_read_at_c(file, chunk_at(layout, area, rank), back, n, record_type, &status));
    log_read("read_at_c own chunk", &status, back, layout->chunk);
  }
}

/* After sync-barrier-sync: everybody's data, read with every _c read flavor. */
static void read_phase(MPI_File file, const Layout *layout, MPI_Datatype record_type,
                       unsigned char *back, unsigned char *whole) {
  const int next = (g_rank + 1) % layout->nranks;
  const MPI_Count n = layout->records, half = n / 2, r = layout->record;
  const MPI_Count file_records = 5 * layout->area / r;
  MPI_Status status;
  MPI_Request request;

  sentinel(back, layout->chunk);
  CHECK(MPI_File_read_at_all_c(file, chunk_at(layout, 0, next), back, n, record_type, &status));
  log_read("read_at_all_c next rank area 0", &status, back, layout->chunk);

  sentinel(back, layout->chunk);
  CHECK(MPI_File_seek(file, chunk_at(layout, 1, next), MPI_SEEK_SET));
  CHECK(MPI_File_read_all_c(file, back, half, record_type, &status));
  log_read("read_all_c next rank area 1 first half", &status, back, half * r);
  CHECK(MPI_File_read_c(file, back + half * r, n - half, record_type, &status));
  log_read("read_c next rank area 1 second half", &status, back + half * r, (n - half) * r);

  sentinel(back, layout->chunk);
  CHECK(MPI_File_read_at_all_begin_c(file, chunk_at(layout, 2, next), back, n, record_type));
  CHECK(MPI_File_read_at_all_end(file, back, &status));
  log_read("read_at_all_begin_c next rank area 2", &status, back, layout->chunk);

  sentinel(back, layout->chunk);
  CHECK(MPI_File_seek(file, chunk_at(layout, 3, next), MPI_SEEK_SET));
  CHECK(MPI_File_read_all_begin_c(file, back, half, record_type));
  CHECK(MPI_File_read_all_end(file, back, &status));
  log_read("read_all_begin_c next rank area 3", &status, back, half * r);
  CHECK(MPI_File_iread_all_c(file, back + half * r, n - half, record_type, &request));
  wait_or_test(&request, &status, 1);
  log_read("iread_all_c next rank area 3", &status, back + half * r, (n - half) * r);

  sentinel(back, layout->chunk);
  CHECK(MPI_File_seek(file, chunk_at(layout, 4, next), MPI_SEEK_SET));
  CHECK(MPI_File_iread_c(file, back, n, record_type, &request));
  wait_or_test(&request, &status, 0);
  log_read("iread_c next rank area 4", &status, back, layout->chunk);

  sentinel(back, layout->chunk);
  CHECK(MPI_File_iread_at_c(file, chunk_at(layout, 2, 0) + 1, back, layout->chunk, MPI_BYTE,
                            &request));
  wait_or_test(&request, &status, 1);
  log_read("iread_at_c rank 0 area 2 shifted by one byte", &status, back, layout->chunk);

  sentinel(whole, 5 * layout->area);
  CHECK(MPI_File_iread_at_all_c(file, 0, whole, file_records, record_type, &request));
  wait_or_test(&request, &status, 0);
  log_read("iread_at_all_c whole file", &status, whole, 5 * layout->area);

  sentinel(back, layout->chunk);
  CHECK(MPI_File_seek_shared(file, chunk_at(layout, 4, 0), MPI_SEEK_SET));
  CHECK(MPI_File_read_ordered_c(file, back, n, record_type, &status));
  log_read("read_ordered_c area 4", &status, back, layout->chunk);

  /* Past the end of file: a contiguous read returns what there is. */
  sentinel(back, layout->chunk);
  const MPI_Offset end = 5 * layout->area;
  CHECK(MPI_File_read_at_c(file, end - r / 2 - 1, back, layout->chunk, MPI_BYTE, &status));
  log_read("read_at_c across end of file", &status, back, bytes_of(&status));
  const MPI_Count expected = r / 2 + 1;
  if (bytes_of(&status) != expected) {
    fail("read_at_c across the end of file returned %lld bytes, expected %lld",
         (long long)bytes_of(&status), (long long)expected);
  }
}

/* A view displaced to area 1, so offsets count bytes from there. Its filetype is the one
 * non-_c constructor here: ROMIO's set_view aborts on any type built by a _c constructor. */
static void view_phase(MPI_File file, const Layout *layout, unsigned char *back) {
  MPI_Status status;
  MPI_Datatype filetype;
  CHECK(MPI_Type_contiguous((int)layout->record, MPI_BYTE, &filetype));
  CHECK(MPI_Type_commit(&filetype));
  CHECK(MPI_File_set_view(file, layout->area, MPI_BYTE, filetype, "native", MPI_INFO_NULL));
  CHECK(MPI_Type_free(&filetype));
  sentinel(back, layout->chunk);
  CHECK(MPI_File_read_at_all_c(file, g_rank * layout->chunk, back, layout->chunk, MPI_BYTE,
                               &status));
  log_read("read_at_all_c through a displaced view", &status, back, layout->chunk);
  MPI_Offset position = 0, byte_offset = 0;
  CHECK(MPI_File_seek(file, 3, MPI_SEEK_SET));
  CHECK(MPI_File_get_position(file, &position));
  CHECK(MPI_File_get_byte_offset(file, position, &byte_offset));
  log_scalar("get_position in the view", position);
  log_scalar("get_byte_offset in the view", byte_offset);
  CHECK(MPI_File_set_view(file, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

static void query_types(MPI_File file, MPI_Datatype record_type) {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0, file_extent = 0;
  CHECK(MPI_Type_size_c(record_type, &size));
  CHECK(MPI_Type_get_extent_c(record_type, &lb, &extent));
  CHECK(MPI_Type_get_true_extent_c(record_type, &true_lb, &true_extent));
  CHECK(MPI_File_get_type_extent_c(file, record_type, &file_extent));
  log_scalar("Type_size_c", size);
  log_scalar("Type_get_extent_c", extent);
  log_scalar("Type_get_true_extent_c", true_extent);
  log_scalar("File_get_type_extent_c", file_extent);
  if (file_extent != extent) {
    fail("MPI_File_get_type_extent_c says %lld, MPI_Type_get_extent_c %lld",
         (long long)file_extent, (long long)extent);
  }
}

static void log_final_file(const char *path) {
  const int fd = open(path, O_RDONLY);
  struct stat info;
  if (fd < 0 || fstat(fd, &info) != 0) fail("cannot open %s", path);
  unsigned char *contents = malloc(info.st_size + 1);
  off_t done = 0;
  while (done < info.st_size) {
    const ssize_t got = read(fd, contents + done, info.st_size - done);
    if (got <= 0) fail("cannot read %s", path);
    done += got;
  }
  close(fd);
  g_step++;
  log_record(DIFFLOG_FINAL_FILE, KIND_FINAL, info.st_size, "final file", contents,
             (uint64_t)info.st_size);
  free(contents);
}

static void run_seed(const char *dir, int nranks) {
  Layout layout;
  layout.nranks = nranks;
  layout.record = 1 + (MPI_Count)((g_seed * 7919u) % 301u); /* odd sizes up to 301 bytes */
  layout.records = 6 * (1 + (MPI_Count)((g_seed * 104729u) % 100u));
  layout.chunk = layout.record * layout.records;
  layout.area = nranks * layout.chunk;
  g_step = 0;

  char path[4096];
  snprintf(path, sizeof path, "%s/c_only_%u.dat", dir, g_seed);
  char detail[256];
  snprintf(detail, sizeof detail, "c_only seed %u nranks=%d record=%lld records=%lld", g_seed,
           nranks, (long long)layout.record, (long long)layout.records);
  log_record(DIFFLOG_SEED_BEGIN, 0, 0, detail, NULL, 0);

  MPI_Datatype record_type;
  CHECK(MPI_Type_contiguous_c(layout.record, MPI_BYTE, &record_type));
  CHECK(MPI_Type_commit(&record_type));

  MPI_Info info;
  CHECK(MPI_Info_create(&info));
  /* As in diff_driver: keep ROMIO from read-modify-writing bytes other ranks own. */
  CHECK(MPI_Info_set(info, "romio_cb_write", "disable"));
  CHECK(MPI_Info_set(info, "romio_ds_write", "disable"));
  MPI_File file;
  CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                      info, &file));
  CHECK(MPI_Info_free(&info));

  unsigned char *data = malloc(layout.chunk);
  unsigned char *back = malloc(layout.chunk);
  unsigned char *whole = malloc(5 * layout.area);
  if (!data || !back || !whole) fail("out of memory");

  query_types(file, record_type);
  write_phase(file, &layout, record_type, data, back);
  sync_barrier_sync(file);
  read_phase(file, &layout, record_type, back, whole);
  view_phase(file, &layout, back);
  MPI_Offset size = 0;
  CHECK(MPI_File_get_size(file, &size));
  log_scalar("get_size", size);

  CHECK(MPI_File_close(&file));
  CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) {
    log_final_file(path);
    CHECK(MPI_File_delete(path, MPI_INFO_NULL));
  }
  CHECK(MPI_Type_free(&record_type));
  free(data);
  free(back);
  free(whole);
}

/* Takes the seed's rank, log and number for the helpers above. */
static void run_one_seed(const diffprog_seed *seed) {
  g_rank = seed->rank;
  g_log = seed->log;
  g_seed = seed->seed;
  run_seed(seed->dir, seed->nranks);
}

int main(int argc, char **argv) { return diffprog_main("c_only", argc, argv, run_one_seed); }
