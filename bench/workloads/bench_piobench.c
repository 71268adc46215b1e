/* pio-bench strided and nested strided reads, with computation between the reads.
 *
 * Strided: records of --record bytes separated by a --stride gap, dealt round-robin to the
 * ranks, so rank r's i-th record is the (i*P + r)-th of the file, at (i*P + r)*(record+stride):
 * each rank sees a constant offset delta of P*(record+stride).
 * Nested strided: groups of --group records with an --inner-stride gap between the records of
 * a group and an --outer-stride gap after each group; groups are dealt to the ranks the same
 * way (rank r's g-th group is the file's (g*P + r)-th), so each rank sees two deltas.
 * Each rank reads --records records, one MPI_File_read_at each, and computes after each: the
 * patterns strided and nested strided prefetching are meant to find.
 */
#include <string.h>

#include "bench_common.h"

static const char *const summary =
    "pio-bench: each rank reads --records records, one read_at each, a compute phase after\n"
    "each. strided: rank r's record i is at (i*P + r)*(record + stride). nested: groups of\n"
    "--group records, --inner-stride apart, --outer-stride after each group; rank r's g-th\n"
    "group is the file's (g*P + r)-th group.";

typedef struct {
  int nested;
  int64_t record, stride, group, inner_stride, outer_stride;
} layout;

static int64_t record_offset(const layout *file, int ranks, int rank, int64_t i) {
  if (!file->nested) return (i * ranks + rank) * (file->record + file->stride);
  const int64_t group_span = file->group * file->record +
                             (file->group - 1) * file->inner_stride + file->outer_stride;
  const int64_t group = i / file->group, member = i % file->group;
  return (group * ranks + rank) * group_span + member * (file->record + file->inner_stride);
}

int main(int argc, char **argv) {
  const char *pattern = "strided";
  layout file = {0, 1 << 20, 1 << 20, 3, 1 << 20, 3 << 20};
  int64_t records = 32;
  const bench_option options[] = {
      {"pattern", BENCH_STRING, &pattern, "strided or nested"},
      {"record", BENCH_INT, &file.record, "record size in bytes"},
      {"stride", BENCH_INT, &file.stride, "strided: gap between records"},
      {"group", BENCH_INT, &file.group, "nested: records per group"},
      {"inner-stride", BENCH_INT, &file.inner_stride, "nested: gap between records of a group"},
      {"outer-stride", BENCH_INT, &file.outer_stride, "nested: gap after each group"},
      {"records", BENCH_INT, &records, "records each rank reads"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "piobench", summary, options, argc, argv);
  bench_require(&run, !strcmp(pattern, "strided") || !strcmp(pattern, "nested"),
                "--pattern must be strided or nested, not '%s'", pattern);
  file.nested = !strcmp(pattern, "nested");
  bench_require(&run, file.record > 0 && file.record <= (1 << 30),
                "--record must be 1 byte to 1 GiB");
  bench_require(&run, records > 0, "--records must be positive");
  bench_require(&run, file.group > 0, "--group must be positive");
  /* Sizes far beyond any test; the bound keeps the offset arithmetic exact. */
  const double span = (double)file.record + file.stride + file.inner_stride + file.outer_stride;
  bench_require(&run, span * (double)(file.group + 1) * records * run.ranks < 4e18,
                "the file would be too large");
  /* Offsets grow with the rank and the record index: the last rank's last record ends it. */
  const int64_t file_size = record_offset(&file, run.ranks, run.ranks - 1, records - 1) +
                            file.record;
  if (run.create_input) return bench_create_input(&run, run.file, file_size);

  void *buffer = bench_alloc(file.record);
  MPI_File handle;
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &handle);
  for (int64_t i = 0; i < records; ++i) {
    bench_read_checked(&run, handle, record_offset(&file, run.ranks, run.rank, i), buffer,
                       file.record);
    bench_compute(&run);
  }
  bench_close(&run, &handle);
  bench_stop(&run);
  free(buffer);
  return bench_finish(&run);
}
