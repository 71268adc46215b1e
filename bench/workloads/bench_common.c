/* Shared code of the benchmark workloads; see bench_common.h for the contract. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- options ---------------------------------------------------------------------------- */

/* Options that steer the program but are not parameters of a measured run: not in "params". */
static int is_reported(const char *name) {
  return strcmp(name, "create-input") != 0 && strcmp(name, "ranks") != 0;
}

static int64_t ranks_option; /* --ranks: the job size a --create-input is for */

static void common_options(bench_run *run, bench_option *table) {
  const bench_option common[] = {
      {"file", BENCH_STRING, &run->file,
       "data file: the input of read workloads, the output of write ones (required)"},
      {"compute-ms", BENCH_DOUBLE, &run->compute_ms, "duration of each compute phase, in ms"},
      {"busy", BENCH_FLAG, &run->busy, "compute phases spin instead of sleeping"},
      {"skip-io", BENCH_FLAG, &run->skip_io,
       "no open/read/write/close (reads yield the pattern): the compute-only bound"},
      {"skip-reads", BENCH_FLAG, &run->skip_reads,
       "no reads (they yield the pattern), writes still made: the compute + writes bound"},
      {"collective", BENCH_FLAG, &run->collective,
       "use MPI_File_read_at_all/write_at_all, not the independent calls"},
      {"seed", BENCH_INT, &run->seed, "seed of random choices (each rank derives its own)"},
      {"create-input", BENCH_FLAG, &run->create_input,
       "do not run: rank 0 creates the input this run needs, then exit"},
      {"ranks", BENCH_INT, &ranks_option,
       "--create-input for a run of N ranks (0: this job's size)"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  memcpy(table, common, sizeof common);
}
enum { COMMON_OPTIONS = 9 };

static int table_size(const bench_option *options) {
  int count = 0;
  while (options && options[count].name) ++count;
  return count;
}

static void leave(int status) {
  fflush(stdout);
  MPI_Finalize();
  exit(status);
}

void bench_require(bench_run *run, int condition, const char *format, ...) {
  if (condition) return;
  if (run->rank == 0) {
    va_list arguments;
    va_start(arguments, format);
    fprintf(stderr, "bench_%s: ", run->workload);
    vfprintf(stderr, format, arguments);
    fprintf(stderr, " (see --help)\n");
    va_end(arguments);
  }
  leave(2);
}

/* A count or size: decimal, with an optional K/M/G suffix (powers of 1024), "KiB"/"KB" too. */
static int parse_int(const char *text, int64_t *value) {
  if (*text < '0' || *text > '9') return 0;
  errno = 0;
  char *end = NULL;
  long long number = strtoll(text, &end, 10);
  if (errno != 0) return 0;
  int shift = 0;
  if (*end) {
    const char *units = "KMG";
    const char *unit = strchr(units, toupper((unsigned char)*end));
    if (!unit) return 0;
    shift = 10 * (int)(unit - units + 1);
    ++end;
    if (strcasecmp(end, "") != 0 && strcasecmp(end, "B") != 0 && strcasecmp(end, "iB") != 0)
      return 0;
  }
  if (number > (INT64_MAX >> shift)) return 0;
  *value = (int64_t)number << shift;
  return 1;
}

static int parse_double(const char *text, double *value) {
  char *end = NULL;
  errno = 0;
  double number = strtod(text, &end);
  if (errno != 0 || end == text || *end || !isfinite(number) || number < 0) return 0;
  *value = number;
  return 1;
}

static void print_help(const bench_run *run, const char *summary, const bench_option *table) {
  printf("usage: bench_%s --file PATH [options]\n\n%s\n\noptions:\n", run->workload, summary);
  for (int i = 0; table[i].name; ++i) {
    const bench_option *option = &table[i];
    char head[64], fallback[64] = "";
    switch (option->kind) {
      case BENCH_INT:
        snprintf(head, sizeof head, "--%s N", option->name);
        snprintf(fallback, sizeof fallback, " (default %lld)",
                 (long long)*(int64_t *)option->value);
        break;
      case BENCH_DOUBLE:
        snprintf(head, sizeof head, "--%s X", option->name);
        snprintf(fallback, sizeof fallback, " (default %g)", *(double *)option->value);
        break;
      case BENCH_STRING:
        snprintf(head, sizeof head, "--%s %s", option->name,
                 strcmp(option->name, "file") && strcmp(option->name, "output") ? "WORD" : "PATH");
        if (*(const char **)option->value)
          snprintf(fallback, sizeof fallback, " (default %s)", *(const char **)option->value);
        break;
      case BENCH_FLAG:
        snprintf(head, sizeof head, "--%s", option->name);
        break;
    }
    printf("  %-24s %s%s\n", head, option->help, fallback);
  }
  printf("  %-24s %s\n", "--help", "this text");
  printf("\nN accepts K, M, G suffixes (powers of 1024). Rank 0 prints one line to stdout:\n"
         "STAGIO_BENCH_RESULT {json}. Exit status: 0 ok, 1 wrong data or failed MPI-IO call,\n"
         "2 bad parameters.\n");
}

static void json_string(FILE *out, const char *text) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
    if (*c == '"' || *c == '\\')
      fprintf(out, "\\%c", *c);
    else if (*c < 0x20)
      fprintf(out, "\\u%04x", *c);
    else
      fputc(*c, out);
  }
  fputc('"', out);
}

/* The "params" object: every reported option with its value, '-' in names turned into '_'. */
static char *params_json(const bench_option *table) {
  char *text = NULL;
  size_t length = 0;
  FILE *out = open_memstream(&text, &length);
  fputc('{', out);
  int first = 1;
  for (int i = 0; table[i].name; ++i) {
    const bench_option *option = &table[i];
    if (!is_reported(option->name)) continue;
    fprintf(out, "%s\"", first ? "" : ", ");
    first = 0;
    for (const char *c = option->name; *c; ++c) fputc(*c == '-' ? '_' : *c, out);
    fprintf(out, "\": ");
    switch (option->kind) {
      case BENCH_INT: fprintf(out, "%lld", (long long)*(int64_t *)option->value); break;
      case BENCH_DOUBLE: fprintf(out, "%.15g", *(double *)option->value); break;
      case BENCH_FLAG: fprintf(out, "%s", *(int *)option->value ? "true" : "false"); break;
      case BENCH_STRING:
        if (*(const char **)option->value)
          json_string(out, *(const char **)option->value);
        else
          fprintf(out, "null");
        break;
    }
  }
  fputc('}', out);
  fclose(out);
  return text;
}

void bench_begin(bench_run *run, const char *workload, const char *summary,
                 const bench_option *options, int argc, char **argv) {
  MPI_Init(&argc, &argv);
  memset(run, 0, sizeof *run);
  run->workload = workload;
  run->compute_ms = 10.0;
  run->seed = 1;
  int world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &run->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);

  /* One table: the workload's options first (they matter most in --help), then the common. */
  const int own = table_size(options);
  bench_option *table = calloc(own + COMMON_OPTIONS + 1, sizeof *table);
  struct option *long_options = calloc(own + COMMON_OPTIONS + 2, sizeof *long_options);
  if (own) memcpy(table, options, own * sizeof *table);
  common_options(run, table + own);
  const int count = own + COMMON_OPTIONS;
  for (int i = 0; i < count; ++i)
    long_options[i] = (struct option){table[i].name,
                                      table[i].kind == BENCH_FLAG ? no_argument : required_argument,
                                      NULL, 256 + i};
  long_options[count] = (struct option){"help", no_argument, NULL, 'h'};

  opterr = 0; /* one message from rank 0, not one per rank */
  int code;
  while ((code = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
    if (code == 'h') {
      if (run->rank == 0) print_help(run, summary, table);
      leave(0);
    }
    bench_require(run, code >= 256 && code < 256 + count,
                  "unknown option or missing value: %s", argv[optind - 1]);
    const bench_option *option = &table[code - 256];
    int ok = 1;
    switch (option->kind) {
      case BENCH_INT: ok = parse_int(optarg, option->value); break;
      case BENCH_DOUBLE: ok = parse_double(optarg, option->value); break;
      case BENCH_STRING: *(const char **)option->value = optarg; break;
      case BENCH_FLAG: *(int *)option->value = 1; break;
    }
    bench_require(run, ok, "--%s: '%s' is not a %s", option->name, optarg,
                  option->kind == BENCH_INT ? "non-negative integer (K/M/G suffix allowed)"
                                            : "non-negative number");
  }
  bench_require(run, optind == argc, "unexpected argument '%s'", argv[optind]);
  bench_require(run, run->file && *run->file, "--file PATH is required");
  bench_require(run, ranks_option <= INT_MAX, "--ranks %lld is too large",
                (long long)ranks_option);
  bench_require(run, ranks_option == 0 || run->create_input || ranks_option == world_size,
                "--ranks is for --create-input only (this job has %d ranks)", world_size);
  run->ranks = ranks_option ? (int)ranks_option : world_size;
  run->options = table; /* "params" is made at the end, with the values the workload settled */
  free(long_options);
}

/* ---- the data pattern ------------------------------------------------------------------- */

/* The pattern byte at any offset: byte (o % 8) of the native-order word holding o & ~7. */
static unsigned char pattern_byte(int64_t offset) {
  uint64_t word = (uint64_t)offset & ~(uint64_t)7;
  unsigned char bytes[8];
  memcpy(bytes, &word, 8);
  return bytes[offset & 7];
}

void bench_fill_pattern(int64_t offset, void *buffer, int64_t length) {
  unsigned char *bytes = buffer;
  int64_t i = 0;
  for (; i < length && ((offset + i) & 7); ++i) bytes[i] = pattern_byte(offset + i);
  for (; i + 8 <= length; i += 8) {
    uint64_t word = (uint64_t)(offset + i);
    memcpy(bytes + i, &word, 8);
  }
  for (; i < length; ++i) bytes[i] = pattern_byte(offset + i);
}

int64_t bench_check_pattern(int64_t offset, const void *buffer, int64_t length) {
  const unsigned char *bytes = buffer;
  int64_t wrong = 0, i = 0;
  for (; i < length && ((offset + i) & 7); ++i) wrong += bytes[i] != pattern_byte(offset + i);
  for (; i + 8 <= length; i += 8) {
    uint64_t word;
    memcpy(&word, bytes + i, 8);
    if (word == (uint64_t)(offset + i)) continue;
    for (int b = 0; b < 8; ++b) wrong += bytes[i + b] != pattern_byte(offset + i + b);
  }
  for (; i < length; ++i) wrong += bytes[i] != pattern_byte(offset + i);
  return wrong;
}

void *bench_alloc(int64_t length) {
  void *buffer = NULL;
  if (posix_memalign(&buffer, 4096, length > 0 ? (size_t)length : 1) != 0) {
    fprintf(stderr, "bench: cannot allocate %lld bytes\n", (long long)length);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return buffer;
}

/* ---- input files ------------------------------------------------------------------------ */

/* An existing input is trusted when its size and its first and last words are right: checking
 * every byte of a large file would cost more than writing it again. */
static int input_looks_right(const char *path, int64_t size) {
  struct stat status;
  if (stat(path, &status) != 0 || !S_ISREG(status.st_mode) || status.st_size != size) return 0;
  if (size == 0) return 1;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  const int64_t first_length = size < 8 ? size : 8;
  const int64_t last_offset = (size - 1) & ~(int64_t)7;
  unsigned char first[8], last[8];
  int ok = pread(fd, first, first_length, 0) == first_length &&
           pread(fd, last, size - last_offset, last_offset) == size - last_offset &&
           bench_check_pattern(0, first, first_length) == 0 &&
           bench_check_pattern(last_offset, last, size - last_offset) == 0;
  close(fd);
  return ok;
}

static int write_input(const char *path, int64_t size) {
  int fd = open(path, O_WRONLY | O_CREAT, 0644);
  if (fd < 0 || ftruncate(fd, size) != 0) {
    fprintf(stderr, "bench: cannot create %s: %s\n", path, strerror(errno));
    if (fd >= 0) close(fd);
    return 1;
  }
  enum { PIECE = 8 << 20 };
  unsigned char *piece = bench_alloc(PIECE);
  int status = 0;
  for (int64_t offset = 0; offset < size && status == 0;) {
    const int64_t length = size - offset < PIECE ? size - offset : PIECE;
    bench_fill_pattern(offset, piece, length);
    const ssize_t written = pwrite(fd, piece, length, offset);
    if (written <= 0) {
      fprintf(stderr, "bench: writing %s at %lld: %s\n", path, (long long)offset,
              written < 0 ? strerror(errno) : "nothing written");
      status = 1;
    }
    offset += written > 0 ? written : 0;
  }
  /* On disk before the runs start, so that no run pays for this file's write-back. */
  if (status == 0 && fsync(fd) != 0) {
    fprintf(stderr, "bench: fsync %s: %s\n", path, strerror(errno));
    status = 1;
  }
  close(fd);
  free(piece);
  return status;
}

static void print_input_line(const bench_run *run, const char *path, int64_t size,
                             int created) {
  printf("STAGIO_BENCH_INPUT {\"workload\": \"%s\", \"file\": ", run->workload);
  if (path)
    json_string(stdout, path);
  else
    printf("null");
  printf(", \"size_bytes\": %lld, \"ranks\": %d, \"created\": %s}\n", (long long)size,
         run->ranks, created ? "true" : "false");
}

int bench_create_input(bench_run *run, const char *path, int64_t size) {
  int status = 0;
  if (run->rank == 0) {
    const int present = input_looks_right(path, size);
    if (!present) status = write_input(path, size);
    if (status == 0) print_input_line(run, path, size, !present);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(run->options);
  fflush(stdout);
  MPI_Finalize();
  return status;
}

int bench_no_input_needed(bench_run *run) {
  if (run->rank == 0) {
    fprintf(stderr, "bench_%s: this run reads no input; nothing to create\n", run->workload);
    print_input_line(run, NULL, 0, 0);
  }
  free(run->options);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}

/* ---- the timed part --------------------------------------------------------------------- */

/* User and system CPU seconds of every thread of this process so far. */
static double process_cpu_seconds(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
         (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
}

void bench_start(bench_run *run) {
  run->compute_s = run->io_s = 0;
  run->io_calls = run->bytes_read = run->bytes_written = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  run->t0 = MPI_Wtime();
  run->cpu0 = process_cpu_seconds();
}

void bench_stop(bench_run *run) {
  /* Before the barrier: what MPICH's barrier burns while it polls is not the run's work. */
  run->cpu1 = process_cpu_seconds();
  MPI_Barrier(MPI_COMM_WORLD);
  run->t1 = MPI_Wtime();
}

void bench_compute(bench_run *run) {
  if (run->compute_ms <= 0) return;
  const double begin = MPI_Wtime(), seconds = run->compute_ms / 1000.0;
  if (run->busy) {
    /* Spin on arithmetic the compiler cannot drop, checking the clock now and then. */
    volatile double sink = 1.0;
    while (MPI_Wtime() - begin < seconds)
      for (int i = 0; i < 1000; ++i) sink = sink * 1.0000001 + 1e-9;
  } else {
    struct timespec left = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  run->compute_s += MPI_Wtime() - begin;
}

static void check_call(const bench_run *run, int code, const char *call, const char *what,
                       int64_t offset, int64_t length) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int message_length = 0;
  MPI_Error_string(code, message, &message_length);
  if (what)
    fprintf(stderr, "bench_%s: rank %d: %s(%s) failed: %s\n", run->workload, run->rank, call,
            what, message);
  else
    fprintf(stderr, "bench_%s: rank %d: %s(offset %lld, %lld bytes) failed: %s\n",
            run->workload, run->rank, call, (long long)offset, (long long)length, message);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static int byte_count(const MPI_Status *status) {
  int count = 0;
  MPI_Get_count(status, MPI_BYTE, &count);
  return count == MPI_UNDEFINED ? 0 : count;
}

static void require_int_length(const bench_run *run, int64_t length) {
  if (length < 0 || length > INT_MAX) {
    fprintf(stderr, "bench_%s: an access of %lld bytes does not fit one MPI call\n",
            run->workload, (long long)length);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* A short transfer leaves bytes the program did not get: they are counted as wrong ones. */
static void note_short(bench_run *run, const char *call, int64_t offset, int64_t length,
                       int64_t count) {
  if (count >= length) return;
  char where[48] = "at the file pointer";
  if (offset >= 0) snprintf(where, sizeof where, "at offset %lld", (long long)offset);
  fprintf(stderr, "bench_%s: rank %d: %s %s moved %lld of %lld bytes\n", run->workload,
          run->rank, call, where, (long long)count, (long long)length);
  run->verify_errors += length - count;
}

/* Every timed MPI-IO call, once the call `began` has returned `code`: its time and count, and
 * the abort on failure (`what` as in check_call). */
static void account_call(bench_run *run, double began, int code, const char *call,
                         const char *what, int64_t offset, int64_t length) {
  run->io_s += MPI_Wtime() - began;
  ++run->io_calls;
  check_call(run, code, call, what, offset, length);
}

void bench_open(bench_run *run, const char *path, int amode, MPI_File *file) {
  bench_open_on(run, MPI_COMM_WORLD, path, amode, file);
}

void bench_open_on(bench_run *run, MPI_Comm comm, const char *path, int amode, MPI_File *file) {
  *file = MPI_FILE_NULL;
  if (run->skip_io) return;
  const double begin = MPI_Wtime();
  const int code = MPI_File_open(comm, path, amode, MPI_INFO_NULL, file);
  account_call(run, begin, code, "MPI_File_open", path, 0, 0);
}

/* account_call for a read or write, which also returns the bytes it moved, adds them to
 * *moved and notes a short transfer. offset -1: at the individual file pointer (a view). */
static int64_t account_transfer(bench_run *run, double began, int code, const char *call,
                                 int64_t offset, int64_t length, const MPI_Status *status,
                                 int64_t *moved) {
  account_call(run, began, code, call, offset < 0 ? "at the file pointer" : NULL, offset,
               length);
  const int count = byte_count(status);
  *moved += count;
  note_short(run, call, offset, length, count);
  return count;
}

int64_t bench_read_at(bench_run *run, MPI_File file, int64_t offset, void *buffer,
                      int64_t length) {
  if (run->skip_io || run->skip_reads) {
    bench_fill_pattern(offset, buffer, length);
    return length;
  }
  require_int_length(run, length);
  MPI_Status status;
  const double begin = MPI_Wtime();
  const int code =
      run->collective
          ? MPI_File_read_at_all(file, offset, buffer, (int)length, MPI_BYTE, &status)
          : MPI_File_read_at(file, offset, buffer, (int)length, MPI_BYTE, &status);
  return account_transfer(run, begin, code,
                          run->collective ? "MPI_File_read_at_all" : "MPI_File_read_at", offset,
                          length, &status, &run->bytes_read);
}

void bench_write_at(bench_run *run, MPI_File file, int64_t offset, const void *buffer,
                    int64_t length) {
  if (run->skip_io) return;
  require_int_length(run, length);
  MPI_Status status;
  const double begin = MPI_Wtime();
  const int code =
      run->collective
          ? MPI_File_write_at_all(file, offset, buffer, (int)length, MPI_BYTE, &status)
          : MPI_File_write_at(file, offset, buffer, (int)length, MPI_BYTE, &status);
  account_transfer(run, begin, code,
                   run->collective ? "MPI_File_write_at_all" : "MPI_File_write_at", offset,
                   length, &status, &run->bytes_written);
}

void bench_set_view(bench_run *run, MPI_File file, int64_t displacement, MPI_Datatype filetype) {
  if (run->skip_io) return;
  const double begin = MPI_Wtime();
  const int code =
      MPI_File_set_view(file, (MPI_Offset)displacement, MPI_BYTE, filetype, "native",
                        MPI_INFO_NULL);
  account_call(run, begin, code, "MPI_File_set_view", "", 0, 0);
}

int64_t bench_read_view(bench_run *run, MPI_File file, void *buffer, int64_t length) {
  if (run->skip_io || run->skip_reads) return length;
  require_int_length(run, length);
  MPI_Status status;
  const double begin = MPI_Wtime();
  const int code = run->collective
                       ? MPI_File_read_all(file, buffer, (int)length, MPI_BYTE, &status)
                       : MPI_File_read(file, buffer, (int)length, MPI_BYTE, &status);
  return account_transfer(run, begin, code,
                          run->collective ? "MPI_File_read_all" : "MPI_File_read", -1, length,
                          &status, &run->bytes_read);
}

void bench_write_view(bench_run *run, MPI_File file, const void *buffer, int64_t length) {
  if (run->skip_io) return;
  require_int_length(run, length);
  MPI_Status status;
  const double begin = MPI_Wtime();
  const int code = run->collective
                       ? MPI_File_write_all(file, buffer, (int)length, MPI_BYTE, &status)
                       : MPI_File_write(file, buffer, (int)length, MPI_BYTE, &status);
  account_transfer(run, begin, code, run->collective ? "MPI_File_write_all" : "MPI_File_write",
                   -1, length, &status, &run->bytes_written);
}

void bench_close(bench_run *run, MPI_File *file) {
  if (run->skip_io) return;
  const double begin = MPI_Wtime();
  const int code = MPI_File_close(file);
  account_call(run, begin, code, "MPI_File_close", "", 0, 0);
}

void bench_read_checked(bench_run *run, MPI_File file, int64_t offset, void *buffer,
                        int64_t length) {
  const int64_t count = bench_read_at(run, file, offset, buffer, length);
  run->verify_errors += bench_check_pattern(offset, buffer, count);
}

void bench_verify_open(bench_run *run, const char *path, MPI_File *file) {
  check_call(run, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, file),
             "MPI_File_open", path, 0, 0);
}

int64_t bench_verify_read(bench_run *run, MPI_File file, int64_t offset, void *buffer,
                          int64_t length) {
  require_int_length(run, length);
  MPI_Status status;
  check_call(run, MPI_File_read_at(file, offset, buffer, (int)length, MPI_BYTE, &status),
             "MPI_File_read_at", NULL, offset, length);
  const int count = byte_count(&status);
  note_short(run, "MPI_File_read_at (verify-output)", offset, length, count);
  return count;
}

void bench_verify_close(bench_run *run, MPI_File *file) {
  check_call(run, MPI_File_close(file), "MPI_File_close", "", 0, 0);
}

/* ---- random numbers: splitmix64, small and good enough to pick offsets ------------------ */

uint64_t bench_rng_next(bench_rng *rng) {
  uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bench_rng bench_rng_for_rank(const bench_run *run) {
  bench_rng rng = {(uint64_t)run->seed * 0xD1B54A32D192ED03ull ^
                   ((uint64_t)run->rank + 1) * 0x9E3779B97F4A7C15ull};
  bench_rng_next(&rng); /* so that nearby seeds/ranks do not start with related numbers */
  return rng;
}

uint64_t bench_rng_below(bench_rng *rng, uint64_t bound) {
  /* Rejection keeps it uniform: drop the few values of the last, incomplete run of bound. */
  const uint64_t threshold = -bound % bound;
  for (;;) {
    const uint64_t value = bench_rng_next(rng);
    if (value >= threshold) return value % bound;
  }
}

/* ---- the end ---------------------------------------------------------------------------- */

int bench_finish(bench_run *run) {
  double local_times[2] = {run->compute_s, run->io_s}, max_times[2] = {0, 0};
  double cpu = run->cpu1 - run->cpu0, cpu_sum = 0, cpu_max = 0;
  MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&cpu, &cpu_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  long long local_counts[4] = {run->io_calls, run->bytes_read, run->bytes_written,
                               run->verify_errors};
  long long total_counts[4] = {0, 0, 0, 0};
  MPI_Reduce(local_times, max_times, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Allreduce(local_counts, total_counts, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (run->rank == 0) {
    char *params = params_json(run->options);
    printf("STAGIO_BENCH_RESULT {\"workload\": \"%s\", \"ranks\": %d, \"params\": %s, "
           "\"elapsed_s\": %.6f, \"compute_s\": %.6f, \"io_s\": %.6f, \"io_calls\": %lld, "
           "\"bytes_read\": %lld, \"bytes_written\": %lld, \"verify_errors\": %lld, "
           "\"cpu_s_mean\": %.6f, \"cpu_s_max\": %.6f",
           run->workload, world_size, params, run->t1 - run->t0, max_times[0],
           max_times[1], total_counts[0], total_counts[1], total_counts[2], total_counts[3],
           cpu_sum / world_size, cpu_max);
    if (run->timings[0]) printf(", \"timings\": %s", run->timings);
    if (run->result[0]) printf(", \"result\": %s", run->result);
    printf("}\n");
    free(params);
    if (total_counts[3] > 0)
      fprintf(stderr, "bench_%s: %lld wrong bytes\n", run->workload, total_counts[3]);
  }
  free(run->options);
  fflush(stdout);
  MPI_Finalize();
  return total_counts[3] > 0 ? 1 : 0;
}
