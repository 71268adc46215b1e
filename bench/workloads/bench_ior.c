/* IOR-like streaming: what a job that only moves data, with nothing to hide it behind, sees.
 *
 * As IOR's segmented layout (-b block -t transfer -s segments): in segment s, rank r writes or
 * reads its block of --block bytes at (s*P + r)*block, in calls of --transfer bytes. With
 * --file-per-process each rank opens the file alone (MPI_COMM_SELF), as IOR -F opens one file
 * per process; the ranks' blocks still lie apart in one file, so that every mode handles the
 * same single file. Write mode writes the data pattern, so --verify-output can check every
 * byte. The overhead suite runs it with no compute, so that the time is the data's alone, open
 * and close included; with --compute-ms, a compute phase comes before each segment (a job that
 * computes a step, then writes or reads its checkpoint).
 */
#include <string.h>

#include "bench_common.h"

static const char *const summary =
    "IOR-like segmented streaming: in segment s rank r moves its --block bytes at\n"
    "(s*P + r)*block in calls of --transfer bytes; --file-per-process opens on MPI_COMM_SELF.";

int main(int argc, char **argv) {
  const char *mode = "write";
  int64_t block = 64 << 20, transfer = 4 << 20, segments = 2;
  int verify_output = 0, file_per_process = 0;
  const bench_option options[] = {
      {"mode", BENCH_STRING, &mode, "read or write"},
      {"block", BENCH_INT, &block, "bytes of each rank in each segment (IOR -b)"},
      {"transfer", BENCH_INT, &transfer, "bytes per call (IOR -t)"},
      {"segments", BENCH_INT, &segments, "segments (IOR -s)"},
      {"file-per-process", BENCH_FLAG, &file_per_process,
       "each rank opens the file alone, on MPI_COMM_SELF (IOR -F)"},
      {"verify-output", BENCH_FLAG, &verify_output,
       "write mode: re-read and check the output after the timed part"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "ior", summary, options, argc, argv);
  bench_require(&run, !strcmp(mode, "read") || !strcmp(mode, "write"),
                "--mode must be read or write, not '%s'", mode);
  const int writing = !strcmp(mode, "write");
  bench_require(&run, transfer > 0 && transfer <= (1 << 30), "--transfer must be 1 byte to 1 GiB");
  bench_require(&run, block > 0 && block % transfer == 0,
                "--block must be a positive multiple of --transfer");
  bench_require(&run, segments > 0, "--segments must be positive");
  bench_require(&run, (double)block * segments * run.ranks < 4e18, "the file would be too large");
  const int64_t file_size = block * segments * run.ranks;
  if (run.create_input) {
    if (writing) return bench_no_input_needed(&run);
    return bench_create_input(&run, run.file, file_size);
  }

  void *buffer = bench_alloc(transfer);
  const MPI_Comm comm = file_per_process ? MPI_COMM_SELF : MPI_COMM_WORLD;
  MPI_File file;
  bench_start(&run);
  bench_open_on(&run, comm, run.file, writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY,
                &file);
  for (int64_t segment = 0; segment < segments; ++segment) {
    bench_compute(&run);
    const int64_t start = (segment * run.ranks + run.rank) * block;
    for (int64_t offset = start; offset < start + block; offset += transfer) {
      if (writing) {
        bench_fill_pattern(offset, buffer, transfer);
        bench_write_at(&run, file, offset, buffer, transfer);
      } else {
        bench_read_checked(&run, file, offset, buffer, transfer);
      }
    }
  }
  bench_close(&run, &file);
  bench_stop(&run);

  if (writing && verify_output && !run.skip_io) {
    bench_verify_open(&run, run.file, &file);
    for (int64_t segment = 0; segment < segments; ++segment) {
      const int64_t start = (segment * run.ranks + run.rank) * block;
      for (int64_t offset = start; offset < start + block; offset += transfer) {
        const int64_t count = bench_verify_read(&run, file, offset, buffer, transfer);
        run.verify_errors += bench_check_pattern(offset, buffer, count);
      }
    }
    bench_verify_close(&run, &file);
  }
  free(buffer);
  return bench_finish(&run);
}
