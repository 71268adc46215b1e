/* Random reads of random sizes: no pattern at all, to measure what stagio costs when it cannot
 * help.
 *
 * Each rank reads --reads times: a size uniform in [--min-size, --max-size] bytes at an offset
 * uniform among the 4 KiB-aligned ones where it fits in --file-size, with a compute phase after
 * each read. Sizes are not word multiples, so the unaligned tails get checked too.
 */
#include "bench_common.h"

static const char *const summary =
    "Random reads: each rank reads --reads times a size uniform in [--min-size, --max-size] at\n"
    "a 4 KiB-aligned offset uniform within --file-size (the input size), a compute phase after\n"
    "each. No pattern: what stagio costs when it cannot help.";

int main(int argc, char **argv) {
  int64_t file_size = 256 << 20, reads = 64, min_size = 4 << 10, max_size = 1 << 20;
  const bench_option options[] = {
      {"file-size", BENCH_INT, &file_size, "input file size in bytes"},
      {"reads", BENCH_INT, &reads, "reads per rank"},
      {"min-size", BENCH_INT, &min_size, "smallest read in bytes"},
      {"max-size", BENCH_INT, &max_size, "largest read in bytes"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "random", summary, options, argc, argv);
  bench_require(&run, min_size > 0 && min_size <= max_size,
                "need 0 < --min-size <= --max-size");
  bench_require(&run, max_size <= file_size && max_size <= (1 << 30),
                "--max-size must be at most --file-size and 1 GiB");
  if (run.create_input) return bench_create_input(&run, run.file, file_size);

  void *buffer = bench_alloc(max_size);
  bench_rng rng = bench_rng_for_rank(&run);
  MPI_File file;
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &file);
  for (int64_t i = 0; i < reads; ++i) {
    const int64_t size = min_size + (int64_t)bench_rng_below(&rng, max_size - min_size + 1);
    const int64_t offset = 4096 * (int64_t)bench_rng_below(&rng, (file_size - size) / 4096 + 1);
    bench_read_checked(&run, file, offset, buffer, size);
    bench_compute(&run);
  }
  bench_close(&run, &file);
  bench_stop(&run);
  free(buffer);
  return bench_finish(&run);
}
