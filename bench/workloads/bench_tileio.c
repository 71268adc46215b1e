/* Overlapping tiles of a sequence of 2-D frames, in the style of mpi-tile-io.
 *
 * The file holds --frames frames one after the other; each frame is a row-major array of
 * --rows x --cols elements of --elem-size bytes. The ranks form a px x py grid
 * (MPI_Dims_create; rank r is at grid row r / py, column r % py) and each owns one block of
 * the array. Its tile is that block grown by --overlap elements on every side, clipped at the
 * array's edges, so neighbouring ranks read the same border data: the redundancy a collective
 * prefetcher should fetch once. The array's size is fixed, so with more ranks the tiles shrink
 * and a larger share of each frame is read twice.
 *
 * Each frame: set a subarray file view at the frame's offset, read the whole tile with one
 * MPI_File_read_all (MPI_File_read without --collective), check every byte, compute.
 */
#include <stdio.h>

#include "bench_common.h"
#include "bench_tiles.h"

static const char *const summary =
    "tileio: --frames frames of --rows x --cols elements of --elem-size bytes, one after the\n"
    "other. The ranks form a px x py grid (MPI_Dims_create); each reads its block of every\n"
    "frame plus --overlap elements on each side (clipped at the edges), through a subarray\n"
    "view at the frame's offset, with one MPI_File_read_all, then computes.";

int main(int argc, char **argv) {
  int64_t rows = 768, cols = 512, elem_size = 8, overlap = 16, frames = 16;
  const bench_option options[] = {
      {"rows", BENCH_INT, &rows, "rows of each frame"},
      {"cols", BENCH_INT, &cols, "columns of each frame"},
      {"elem-size", BENCH_INT, &elem_size, "bytes per element"},
      {"overlap", BENCH_INT, &overlap, "elements each tile reaches into its neighbours"},
      {"frames", BENCH_INT, &frames, "frames each rank reads its tile of"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "tileio", summary, options, argc, argv);
  int dims[2] = {0, 0};
  MPI_Dims_create(run.ranks, 2, dims);
  bench_require(&run, frames > 0, "--frames must be positive");
  bench_require(&run, elem_size > 0 && elem_size <= (1 << 20),
                "--elem-size must be 1 byte to 1 MiB");
  /* MPI_Type_create_subarray takes int sizes; every block needs at least one element. */
  bench_require(&run, rows >= dims[0] && cols >= dims[1] && rows <= (1 << 30) &&
                          cols <= (1 << 30),
                "--rows and --cols must be at least the grid (%d x %d) and at most 2^30", dims[0],
                dims[1]);
  const int64_t frame_bytes = rows * cols * elem_size;
  bench_require(&run, (double)frame_bytes < (1u << 31),
                "a frame must be smaller than 2 GiB (one read of a whole tile)");
  bench_require(&run, (double)frame_bytes * frames < 4e18, "the file would be too large");
  if (run.create_input) return bench_create_input(&run, run.file, frame_bytes * frames);

  const int grid_row = run.rank / dims[1], grid_col = run.rank % dims[1];
  /* A rank's tile: its block of the array, grown by --overlap and clipped at the edges. */
  const tile t = tile_of(rows, cols, elem_size,
                         span_part(0, rows, dims[0], grid_row, overlap, rows),
                         span_part(0, cols, dims[1], grid_col, overlap, cols));
  MPI_Datatype filetype = tile_filetype(&t);
  unsigned char *buffer = bench_alloc(t.bytes);

  MPI_File handle;
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &handle);
  for (int64_t frame = 0; frame < frames; ++frame) {
    const int64_t frame_offset = frame * frame_bytes;
    bench_set_view(&run, handle, frame_offset, filetype);
    const int64_t count = bench_read_view(&run, handle, buffer, t.bytes);
    if (run.skip_io || run.skip_reads) tile_fill(&t, frame_offset, buffer);
    /* A short read is already counted; check only what came. */
    run.verify_errors += count < t.bytes ? 0 : tile_check(&t, frame_offset, buffer);
    bench_compute(&run);
  }
  bench_close(&run, &handle);
  bench_stop(&run);

  /* How much of a frame the ranks read more than once: what redundancy filtering can save. */
  long long tiles_bytes = 0, mine = t.bytes;
  MPI_Allreduce(&mine, &tiles_bytes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  snprintf(run.result, sizeof run.result,
           "{\"grid\": [%d, %d], \"frame_bytes\": %lld, \"tiles_bytes_per_frame\": %lld}",
           dims[0], dims[1], (long long)frame_bytes, tiles_bytes);
  MPI_Type_free(&filetype);
  free(buffer);
  return bench_finish(&run);
}
