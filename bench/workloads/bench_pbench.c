/* PBench: random rows of a big matrix of doubles, with computation between the reads.
 *
 * The input is a --rows x --cols matrix of doubles stored row after row. Each rank reads
 * --reads rows chosen uniformly at random (its own seeded stream), one MPI_File_read_at per
 * row, and computes after each. This is the access that pattern-based prefetching cannot
 * predict: a strided or sequential predictor must gain nothing here, only pre-execution can.
 */
#include "bench_common.h"

static const char *const summary =
    "PBench: each rank reads --reads uniformly random rows of a --rows x --cols matrix of\n"
    "doubles (one read_at per row, a compute phase after each). Input size: rows*cols*8.";

int main(int argc, char **argv) {
  int64_t rows = 1024, cols = 32768, reads = 32;
  const bench_option options[] = {
      {"rows", BENCH_INT, &rows, "matrix rows"},
      {"cols", BENCH_INT, &cols, "matrix columns (doubles per row)"},
      {"reads", BENCH_INT, &reads, "rows each rank reads"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "pbench", summary, options, argc, argv);
  bench_require(&run, rows > 0 && cols > 0, "--rows and --cols must be positive");
  bench_require(&run, cols <= (1 << 27), "--cols %lld: a row must fit one read of 1 GiB at most",
                (long long)cols);
  bench_require(&run, rows <= (INT64_C(1) << 62) / (cols * 8), "the matrix is too large");
  const int64_t row_bytes = cols * 8;
  if (run.create_input) return bench_create_input(&run, run.file, rows * row_bytes);

  double *row = bench_alloc(row_bytes);
  bench_rng rng = bench_rng_for_rank(&run);
  MPI_File file;
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &file);
  for (int64_t i = 0; i < reads; ++i) {
    const int64_t offset = (int64_t)bench_rng_below(&rng, rows) * row_bytes;
    bench_read_checked(&run, file, offset, row, row_bytes);
    bench_compute(&run);
  }
  bench_close(&run, &file);
  bench_stop(&run);
  free(row);
  return bench_finish(&run);
}
