/* Shared code of the benchmark workloads: options, timing, compute phases, the data pattern,
 * MPI-IO calls that count what they do, and the one result line.
 *
 * The workloads are plain MPI programs that know nothing of stagio; a harness runs each of them
 * with plain MPI-IO, under stagio (LD_PRELOAD) and with --skip-io (the compute-only bound), and
 * compares the result lines. So everything a run measures goes through this file, the same way
 * in every program:
 *
 *   bench_begin()            MPI_Init, options (common + the workload's table), --help
 *   bench_create_input()     --create-input: rank 0 writes the input file with POSIX pwrite
 *   bench_start()            barrier, t0
 *   bench_open/read_at/...   timed MPI-IO calls (skipped, or replaced by the pattern, with
 *                            --skip-io), and bench_compute() for each compute phase
 *   bench_stop()             barrier, t1
 *   bench_finish()           reductions, "STAGIO_BENCH_RESULT {json}" from rank 0,
 *                            MPI_Finalize, the exit status
 *
 * Data pattern: every aligned 8-byte word at file offset o holds the uint64 value o in native
 * byte order. Any byte of any file can so be checked alone, whatever the access size/alignment.
 *
 * A failing MPI-IO call prints the MPI error string naming the call and aborts the job (exit
 * status non-zero): carrying on would leave the other ranks waiting in a collective call.
 */
#ifndef STAGIO_BENCH_COMMON_H
#define STAGIO_BENCH_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h> /* free() for bench_alloc() buffers */

/* ---- options ---------------------------------------------------------------------------- */

typedef enum {
  BENCH_INT,    /* int64_t, >= 0; K/M/G suffixes (powers of 1024) accepted: 1M, 4KiB */
  BENCH_DOUBLE, /* double, >= 0 */
  BENCH_STRING, /* const char *, NULL when not given */
  BENCH_FLAG,   /* int, set to 1 when given */
} bench_option_kind;

/* One option of a workload's table, ended by an entry with name NULL. The value the variable
 * holds before bench_begin() is the default, which --help shows. Every option is reported in
 * the result line's "params", with '-' turned into '_'. */
typedef struct {
  const char *name;
  bench_option_kind kind;
  void *value;
  const char *help;
} bench_option;

/* ---- a run ------------------------------------------------------------------------------ */

typedef struct {
  const char *workload; /* "pbench", ... */
  int rank;
  int ranks; /* number of ranks the file layout is for: the job's size, or --ranks when
                creating an input with fewer ranks than the run will have */

  /* Common options. */
  const char *file;
  double compute_ms;
  int busy, skip_io, skip_reads, collective, create_input;
  int64_t seed;

  /* What this rank did in the timed part. */
  double compute_s, io_s;
  int64_t io_calls, bytes_read, bytes_written, verify_errors;
  double t0, t1;
  /* CPU time of the whole process (the program's thread and stagio's threads), user and
     system, at t0 and t1: what the run took from the cores the program computes on. */
  double cpu0, cpu1;

  bench_option *options; /* all options, for "params": printed at the end, so a workload may
                            replace a default that depends on other options (0 = automatic) */
  char result[1024];  /* optional "result" JSON value (workload-specific), "" for none */
  /* Optional "timings" JSON value: workload-specific times, which differ from run to run
   * (unlike "result", which runs of one workload must agree on); "" for none. */
  char timings[1024];
} bench_run;

/* MPI_Init, then parse the common options and `options` (may be NULL). `summary` is the
 * workload's --help text (what it does, its access pattern). --help prints and exits 0; a bad
 * option exits 2. */
void bench_begin(bench_run *run, const char *workload, const char *summary,
                 const bench_option *options, int argc, char **argv);

/* Parameter validation: when `condition` is false, rank 0 prints the message and every rank
 * leaves with status 2 (all ranks see the same options, so they all agree). */
void bench_require(bench_run *run, int condition, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* --create-input: rank 0 makes `path` a file of exactly `size` bytes holding the data pattern
 * (kept as it is when it already has that size and its first and last words are right), prints
 * "STAGIO_BENCH_INPUT {json}" and the job ends. Returns the exit status for main. */
int bench_create_input(bench_run *run, const char *path, int64_t size);

/* --create-input for a run that reads no input: says so and returns exit status 0. */
int bench_no_input_needed(bench_run *run);

/* ---- the timed part --------------------------------------------------------------------- */

void bench_start(bench_run *run); /* barrier, t0 = MPI_Wtime(), counters reset */
void bench_stop(bench_run *run);  /* barrier, t1 */

/* One compute phase of --compute-ms: nanosleep, or spin with --busy. */
void bench_compute(bench_run *run);

/* Timed, counted MPI-IO calls on MPI_COMM_WORLD. With --skip-io they do nothing, except that
 * bench_read_at fills the buffer with the pattern, so that what follows computes on the same
 * data. --skip-reads does the same to the reads alone (bench_read_at, bench_read_view): what
 * is left, compute and writes, is the bound a perfect prefetcher could reach. read_at/write_at
 * use the _all variants with --collective, where every rank must make the same number of
 * calls (length 0 is allowed, for padding). bench_read_at returns the bytes read; a short read
 * or write adds the bytes missing to verify_errors. */
void bench_open(bench_run *run, const char *path, int amode, MPI_File *file);
/* The same on another communicator (MPI_COMM_SELF: each rank opens the file alone). */
void bench_open_on(bench_run *run, MPI_Comm comm, const char *path, int amode, MPI_File *file);
int64_t bench_read_at(bench_run *run, MPI_File file, int64_t offset, void *buffer,
                      int64_t length);
void bench_write_at(bench_run *run, MPI_File file, int64_t offset, const void *buffer,
                    int64_t length);
void bench_close(bench_run *run, MPI_File *file);

/* Reads through a file view (bench_tileio), timed and counted like the calls above.
 * bench_set_view sets `filetype` at `displacement` (etype MPI_BYTE, "native"); it is
 * collective. bench_read_view reads `length` bytes at the individual file pointer with
 * MPI_File_read_all under --collective, MPI_File_read otherwise. With --skip-io both do
 * nothing, bench_read_view also with --skip-reads, and it returns `length` with the buffer
 * untouched: only the workload knows which file offset the view maps each byte to, so it fills
 * in the pattern itself. */
void bench_set_view(bench_run *run, MPI_File file, int64_t displacement, MPI_Datatype filetype);
int64_t bench_read_view(bench_run *run, MPI_File file, void *buffer, int64_t length);
/* Writes `length` bytes at the individual file pointer through the view (bench_btio), with
 * MPI_File_write_all under --collective, MPI_File_write otherwise; nothing with --skip-io. */
void bench_write_view(bench_run *run, MPI_File file, const void *buffer, int64_t length);

/* bench_read_at, then check every byte read against the pattern into verify_errors. */
void bench_read_checked(bench_run *run, MPI_File file, int64_t offset, void *buffer,
                        int64_t length);

/* Untimed independent reads for --verify-output, after bench_stop(): not counted in the I/O
 * stats. Open with MPI_MODE_RDONLY, read (returns the bytes read; a short read counts the bytes
 * missing in verify_errors), close; errors abort like the timed calls. */
void bench_verify_open(bench_run *run, const char *path, MPI_File *file);
int64_t bench_verify_read(bench_run *run, MPI_File file, int64_t offset, void *buffer,
                          int64_t length);
void bench_verify_close(bench_run *run, MPI_File *file);

/* ---- data ------------------------------------------------------------------------------- */

void bench_fill_pattern(int64_t offset, void *buffer, int64_t length);
/* The number of bytes of buffer that differ from the pattern at `offset`. */
int64_t bench_check_pattern(int64_t offset, const void *buffer, int64_t length);

/* A buffer of `length` bytes (at least 1), page-aligned; exits on failure. */
void *bench_alloc(int64_t length);

/* Per-rank random stream: the same --seed and rank give the same numbers. */
typedef struct {
  uint64_t state;
} bench_rng;
bench_rng bench_rng_for_rank(const bench_run *run);
uint64_t bench_rng_next(bench_rng *rng);
/* Uniform in [0, bound), bound > 0. */
uint64_t bench_rng_below(bench_rng *rng, uint64_t bound);

/* ---- the end ---------------------------------------------------------------------------- */

/* Reduce the counters, print the result line from rank 0, MPI_Finalize. Returns the exit
 * status for main: 1 if any rank found a wrong byte, else 0. */
int bench_finish(bench_run *run);

#endif
