/* PBench: random rows of a big matrix of doubles, with computation between the reads.
 *
 * The input is a --rows x --cols matrix of doubles stored row after row. Each rank reads
 * --reads rows chosen uniformly at random (its own seeded stream), one MPI_File_read_at per
 * row, and computes after each. This is the access that pattern-based prefetching cannot
 * predict: a strided or sequential predictor must gain nothing here, only pre-execution can
 * (examples/preexec/preexec_pbench.c is this program with its I/O slice).
 */
#include "bench_common.h"
#include "bench_kernels.h"

static const char *const summary =
    "PBench: each rank reads --reads uniformly random rows of a --rows x --cols matrix of\n"
    "doubles (one read_at per row, a compute phase after each). Input size: rows*cols*8.";

int main(int argc, char **argv) {
  pbench_matrix m = {.rows = 1024, .cols = 32768, .reads = 32};
  const bench_option options[] = {PBENCH_MATRIX_OPTIONS(m), {NULL, BENCH_FLAG, NULL, NULL}};
  bench_run run;
  bench_begin(&run, "pbench", summary, options, argc, argv);
  pbench_matrix_check(&run, &m);
  if (run.create_input) return bench_create_input(&run, run.file, m.rows * m.row_bytes);

  double *row = bench_alloc(m.row_bytes);
  bench_rng rng = bench_rng_for_rank(&run);
  MPI_File file;
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &file);
  for (int64_t i = 0; i < m.reads; ++i) {
    bench_read_checked(&run, file, pbench_next_row(&m, &rng), row, m.row_bytes);
    bench_compute(&run);
  }
  bench_close(&run, &file);
  bench_stop(&run);
  free(row);
  return bench_finish(&run);
}
