/* SimParIO: alternating I/O and compute phases over non-overlapping records.
 *
 * In phase ph, rank r reads or writes the records ((ph*k + j)*P + r) for j = 0..k-1, each of
 * --record bytes at index*(record + stride), then computes. With the defaults (k = 1, no
 * stride) the ranks together sweep the file sequentially, one record per rank per phase: the
 * checkpoint-like writes that write-back should absorb, and the reads that read-ahead on the
 * aggregators should serve. Write mode writes the data pattern, so --verify-output (or any
 * later read) can check every byte.
 */
#include <string.h>

#include "bench_common.h"

static const char *const summary =
    "SimParIO: --phases phases of I/O then compute. In phase ph rank r reads or writes the\n"
    "records ((ph*k + j)*P + r), j < k = --records-per-phase, each at index*(record+stride).";

int main(int argc, char **argv) {
  const char *mode = "read";
  int64_t record = 1 << 20, stride = 0, per_phase = 1, phases = 32;
  int verify_output = 0;
  const bench_option options[] = {
      {"mode", BENCH_STRING, &mode, "read or write"},
      {"record", BENCH_INT, &record, "record size in bytes"},
      {"stride", BENCH_INT, &stride, "gap after each record"},
      {"records-per-phase", BENCH_INT, &per_phase, "records each rank accesses per phase (k)"},
      {"phases", BENCH_INT, &phases, "I/O + compute phases"},
      {"verify-output", BENCH_FLAG, &verify_output,
       "write mode: re-read and check the output after the timed part"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "simpario", summary, options, argc, argv);
  bench_require(&run, !strcmp(mode, "read") || !strcmp(mode, "write"),
                "--mode must be read or write, not '%s'", mode);
  const int writing = !strcmp(mode, "write");
  bench_require(&run, record > 0 && record <= (1 << 30), "--record must be 1 byte to 1 GiB");
  bench_require(&run, per_phase > 0 && phases > 0,
                "--records-per-phase and --phases must be positive");
  bench_require(&run, ((double)record + stride) * per_phase * phases * run.ranks < 4e18,
                "the file would be too large");
  const int64_t records_in_file = phases * per_phase * run.ranks;
  if (run.create_input) {
    if (writing) return bench_no_input_needed(&run);
    return bench_create_input(&run, run.file, (records_in_file - 1) * (record + stride) + record);
  }

  void *buffer = bench_alloc(record);
  MPI_File file;
  bench_start(&run);
  bench_open(&run, run.file, writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY,
             &file);
  for (int64_t phase = 0; phase < phases; ++phase) {
    for (int64_t j = 0; j < per_phase; ++j) {
      const int64_t offset = ((phase * per_phase + j) * run.ranks + run.rank) * (record + stride);
      if (writing) {
        bench_fill_pattern(offset, buffer, record);
        bench_write_at(&run, file, offset, buffer, record);
      } else {
        bench_read_checked(&run, file, offset, buffer, record);
      }
    }
    bench_compute(&run);
  }
  bench_close(&run, &file);
  bench_stop(&run);

  if (writing && verify_output && !run.skip_io) {
    bench_verify_open(&run, run.file, &file);
    for (int64_t index = run.rank; index < records_in_file; index += run.ranks) {
      const int64_t offset = index * (record + stride);
      const int64_t count = bench_verify_read(&run, file, offset, buffer, record);
      run.verify_errors += bench_check_pattern(offset, buffer, count);
    }
    bench_verify_close(&run, &file);
  }
  free(buffer);
  return bench_finish(&run);
}
