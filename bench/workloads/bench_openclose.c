/* Many small files: what opening and closing cost, with almost no data to move.
 *
 * For i < --files, every rank opens <file>.<i> together (MPI_COMM_WORLD), writes --size bytes
 * of the data pattern at rank*size and closes it: the fixed costs of open and close (and of a
 * first small write) over and over, as a job that writes many small outputs pays them. After
 * the timed part --verify-output re-reads every file; rank 0 then deletes them all.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

static const char *const summary =
    "Many small files: for i < --files, all ranks open <file>.<i>, each writes --size bytes at\n"
    "rank*size, and close it. The files are deleted after the run.";

static void file_name(char *name, size_t size, const char *base, int64_t index) {
  snprintf(name, size, "%s.%lld", base, (long long)index);
}

int main(int argc, char **argv) {
  int64_t files = 1000, size = 1024;
  int verify_output = 0;
  const bench_option options[] = {
      {"files", BENCH_INT, &files, "how many files to open, write and close"},
      {"size", BENCH_INT, &size, "bytes each rank writes to each file"},
      {"verify-output", BENCH_FLAG, &verify_output,
       "re-read and check every file after the timed part"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "openclose", summary, options, argc, argv);
  bench_require(&run, files > 0, "--files must be positive");
  bench_require(&run, size > 0 && size <= (1 << 30), "--size must be 1 byte to 1 GiB");
  if (run.create_input) return bench_no_input_needed(&run);

  const int64_t offset = run.rank * size;
  void *buffer = bench_alloc(size);
  bench_fill_pattern(offset, buffer, size);
  char name[4096];
  MPI_File file;
  bench_start(&run);
  for (int64_t i = 0; i < files; ++i) {
    file_name(name, sizeof name, run.file, i);
    bench_open(&run, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, &file);
    bench_write_at(&run, file, offset, buffer, size);
    bench_close(&run, &file);
  }
  bench_stop(&run);

  if (!run.skip_io) {
    for (int64_t i = 0; i < files && verify_output; ++i) {
      file_name(name, sizeof name, run.file, i);
      bench_verify_open(&run, name, &file);
      const int64_t count = bench_verify_read(&run, file, offset, buffer, size);
      run.verify_errors += bench_check_pattern(offset, buffer, count);
      bench_verify_close(&run, &file);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int64_t i = 0; i < files && run.rank == 0; ++i) {
      file_name(name, sizeof name, run.file, i);
      unlink(name);
    }
  }
  free(buffer);
  return bench_finish(&run);
}
