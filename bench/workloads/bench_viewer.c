/* A viewer over a 2-D array: repeated passes over overlapping, non-contiguous windows, each
 * pass a new open of the file, as an interactive viewer or a tiled post-processing step makes
 * them (the case of seed 002, SOGP).
 *
 * The file is a row-major array of --rows x --cols elements of --elem-size bytes. Each pass
 * opens the file, sets a subarray view of this rank's part of the pass's window, reads it with
 * one MPI_File_read (the view makes it non-contiguous), checks every byte, closes the file and
 * waits --compute-ms (the user looking at the picture) before the next pass. --pattern says
 * what the windows are:
 *
 *   zoom   noncontig-style zoom, centred on the array: at level L (pass % --levels) the window
 *          is (--window-rows >> L) rows by (--window-cols << L) elements, so the vector length
 *          grows while the count shrinks and their product stays the same. Each rank reads a
 *          band of the window's rows.
 *   tiles  mpi-tile-io with overlapping tiles: a --window-rows x --window-cols window, its top
 *          row moving down --shift rows per pass; the ranks form a px x py grid
 *          (MPI_Dims_create) and each reads its tile of the window grown by --overlap elements
 *          on every side.
 *   scan   a read-once strided scan: the ranks read bands of all the rows, --window-cols
 *          elements of each from the middle, one pass per band of --rows / --passes rows, so
 *          no byte is read twice.
 */
#include <stdio.h>
#include <string.h>

#include "bench_common.h"
#include "bench_tiles.h"

static const char *const summary =
    "viewer: --passes passes over windows of a --rows x --cols array of --elem-size-byte\n"
    "elements, each a new open, a subarray view of this rank's part of the window, one read,\n"
    "a check of every byte, a close, and --compute-ms of waiting. --pattern zoom (the window's\n"
    "rows halve and its columns double per level), tiles (overlapping tiles of a window that\n"
    "moves down --shift rows per pass) or scan (each row band read once).";

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

enum { kMaxPasses = 64 }; /* each pass's I/O time goes into the result line */

int main(int argc, char **argv) {
  int64_t rows = 512, cols = 32768, elem_size = 8, passes = 6, levels = 3;
  int64_t window_rows = 256, window_cols = 8192, shift = 16, overlap = 16;
  const char *pattern = "zoom";
  const bench_option options[] = {
      {"pattern", BENCH_STRING, &pattern, "zoom, tiles or scan"},
      {"rows", BENCH_INT, &rows, "rows of the array"},
      {"cols", BENCH_INT, &cols, "columns of the array"},
      {"elem-size", BENCH_INT, &elem_size, "bytes per element"},
      {"passes", BENCH_INT, &passes, "passes over the array, each a new open"},
      {"levels", BENCH_INT, &levels, "zoom: levels, the window's rows halving at each"},
      {"window-rows", BENCH_INT, &window_rows, "rows of the window (zoom: at level 0)"},
      {"window-cols", BENCH_INT, &window_cols, "columns of the window (zoom: at level 0)"},
      {"shift", BENCH_INT, &shift, "tiles: rows the window moves down per pass"},
      {"overlap", BENCH_INT, &overlap, "tiles: elements each tile reaches into its neighbours"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "viewer", summary, options, argc, argv);
  const int zoom = strcmp(pattern, "zoom") == 0, tiles = strcmp(pattern, "tiles") == 0,
            scan = strcmp(pattern, "scan") == 0;
  bench_require(&run, zoom || tiles || scan, "--pattern must be zoom, tiles or scan");
  bench_require(&run, passes > 0 && passes <= kMaxPasses && levels > 0,
                "--passes must be 1 to %d, and --levels positive", kMaxPasses);
  bench_require(&run, elem_size > 0 && elem_size <= (1 << 20),
                "--elem-size must be 1 byte to 1 MiB");
  bench_require(&run, rows > 0 && cols > 0 && rows <= (1 << 30) && cols <= (1 << 30),
                "--rows and --cols must be from 1 to 2^30");
  bench_require(&run, window_rows > 0 && window_cols > 0 && window_cols <= cols,
                "the window must have rows and at most --cols columns");
  bench_require(&run, (window_rows >> (levels - 1)) >= run.ranks || !zoom,
                "zoom: the smallest level must have a row for every rank");
  bench_require(&run, !tiles || window_rows + (passes - 1) * shift <= rows,
                "tiles: the window moves past the last row");
  bench_require(&run, !scan || rows / passes >= run.ranks,
                "scan: every pass needs a row for every rank");
  const int64_t array_bytes = rows * cols * elem_size;
  bench_require(&run, (double)array_bytes < 4e18, "the file would be too large");
  if (run.create_input) return bench_create_input(&run, run.file, array_bytes);

  int dims[2] = {0, 0};
  MPI_Dims_create(run.ranks, 2, dims);
  int64_t read_total = 0;
  double pass_io_s[kMaxPasses] = {0};
  bench_start(&run);
  for (int64_t pass = 0; pass < passes; ++pass) {
    span row, col;
    if (zoom) {
      const int64_t level = pass % levels;
      const int64_t height = window_rows >> level, width = min64(window_cols << level, cols);
      row = span_part((rows - height) / 2, height, run.ranks, run.rank, 0, rows);
      col = (span){(cols - width) / 2, width};
    } else if (tiles) {
      const int grid_row = run.rank / dims[1], grid_col = run.rank % dims[1];
      row = span_part(pass * shift, window_rows, dims[0], grid_row, overlap, rows);
      col = span_part((cols - window_cols) / 2, window_cols, dims[1], grid_col, overlap, cols);
    } else {
      const int64_t band = rows / passes;
      row = span_part(pass * band, band, run.ranks, run.rank, 0, rows);
      col = (span){(cols - window_cols) / 2, window_cols};
    }
    const tile t = tile_of(rows, cols, elem_size, row, col);
    MPI_Datatype filetype = tile_filetype(&t);
    unsigned char *buffer = bench_alloc(t.bytes);
    MPI_File handle;
    const double io_before = run.io_s;
    bench_open(&run, run.file, MPI_MODE_RDONLY, &handle);
    bench_set_view(&run, handle, 0, filetype);
    const int64_t count = bench_read_view(&run, handle, buffer, t.bytes);
    bench_close(&run, &handle);
    pass_io_s[pass] = run.io_s - io_before;
    if (run.skip_io || run.skip_reads) tile_fill(&t, 0, buffer);
    run.verify_errors += count < t.bytes ? 0 : tile_check(&t, 0, buffer);
    read_total += t.bytes;
    MPI_Type_free(&filetype);
    free(buffer);
    if (pass + 1 < passes) bench_compute(&run);
  }
  bench_stop(&run);

  long long bytes = read_total, all = 0;
  MPI_Allreduce(&bytes, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  /* Each pass's I/O time on its slowest rank: the first pass against the later ones. */
  double slowest[kMaxPasses] = {0};
  MPI_Allreduce(pass_io_s, slowest, (int)passes, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  char times[kMaxPasses * 12 + 2] = "";
  for (int64_t pass = 0; pass < passes; ++pass) {
    const size_t used = strlen(times);
    snprintf(times + used, sizeof times - used, "%s%.4f", pass > 0 ? ", " : "", slowest[pass]);
  }
  snprintf(run.timings, sizeof run.timings, "{\"pass_io_s\": [%s]}", times);
  snprintf(run.result, sizeof run.result,
           "{\"pattern\": \"%s\", \"window_bytes_read\": %lld, \"array_bytes\": %lld}",
           pattern, all, (long long)array_bytes);
  return bench_finish(&run);
}
