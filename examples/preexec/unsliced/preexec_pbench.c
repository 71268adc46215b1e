/* PBench with pre-execution prefetching: random rows of a big matrix of doubles, with a
 * compute phase after each read (seed 001, section VI-B).
 *
 * The input is a --rows x --cols matrix of doubles stored row after row. Each rank reads
 * --reads rows drawn from its own seeded random stream, one read_at per row, and computes
 * after each: the access no pattern predictor can foresee. The I/O slice draws the same rows
 * from its own copy of the stream (variable renaming, seed 001 section III-B) and announces
 * each read, so the helper fetches the rows while the main thread computes.
 *
 * Result: a hash of every byte read, per rank in read order, then over the ranks in rank
 * order: the same in every mode, since every mode must read the same data.
 */
#include <stdio.h>

#include "bench_kernels.h"
#include "bench_common.h"

static const char *const summary =
    "PBench: each rank reads --reads random rows of a\n"
    "--rows x --cols matrix of doubles (one read_at per row, a compute phase after each).\n"
    "Input size: rows*cols*8.";

typedef struct {
  const bench_run *run;
  const pbench_matrix *matrix;
  MPI_File file;
  bench_rng rng; /* the stream as it is before the first row is drawn */
} pbench_job;

int main(int argc, char **argv) {
  pbench_matrix m = {.rows = 1024, .cols = 32768, .reads = 32};
  const bench_option options[] = {PBENCH_MATRIX_OPTIONS(m), {NULL, BENCH_FLAG, NULL, NULL}};
  bench_run run;
  bench_begin(&run, "preexec_pbench", summary, options, argc, argv);
  pbench_matrix_check(&run, &m);
  if (run.create_input) return bench_create_input(&run, run.file, m.rows * m.row_bytes);

  unsigned char *row = bench_alloc(m.row_bytes);
  pbench_job job = {&run, &m, MPI_FILE_NULL, bench_rng_for_rank(&run)};
  bench_rng rng = job.rng;
  uint64_t hash = BENCH_HASH_INIT;
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &job.file);
  for (int64_t i = 0; i < m.reads; ++i) {
    bench_read_checked(&run, job.file, pbench_next_row(&m, &rng), row, m.row_bytes);
    hash = bench_hash(hash, row, m.row_bytes);
    bench_compute(&run);
  }
  bench_close(&run, &job.file);
  bench_stop(&run);

  hash = bench_hash_ranks(hash);
  snprintf(run.result, sizeof run.result, "{\"rows_read\": %lld, \"checksum\": \"%016llx\"}",
           (long long)m.reads * run.ranks, (unsigned long long)hash);
  free(row);
  return bench_finish(&run);
}
