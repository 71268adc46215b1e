/* Tiles of 2-D arrays stored row-major in a file, read through a subarray file view: their
 * geometry, the view's filetype, and the pattern a tile's bytes must hold. Shared by
 * bench_tileio and the tile-convolution example (examples/preexec).
 */
#ifndef STAGIO_BENCH_TILES_H
#define STAGIO_BENCH_TILES_H

#include <mpi.h>
#include <stdint.h>

/* One dimension of a tile: `length` elements from `start`. */
typedef struct {
  int64_t start, length;
} span;

typedef struct {
  int64_t rows, cols, elem_size; /* the whole array */
  span row, col;                 /* the tile */
  int64_t bytes;                 /* of the tile */
} tile;

/* Piece `index` of [start, start + length) cut into `parts`, grown by `overlap` on both sides
 * and clipped to [0, limit): a rank's share of a window, reaching into its neighbours'. */
span span_part(int64_t start, int64_t length, int parts, int index, int64_t overlap,
               int64_t limit);

/* A tile of `row` x `col` of a rows x cols array of elem_size-byte elements. */
tile tile_of(int64_t rows, int64_t cols, int64_t elem_size, span row, span col);

/* The file offset of the first byte of the tile's row `i`, in the array at `array_offset`. */
int64_t tile_row_offset(const tile *t, int64_t array_offset, int64_t i);

/* Puts into `buffer` (the tile's bytes, row after row) the pattern a read of the tile of the
 * array at `array_offset` brings: what --skip-io/--skip-reads use instead of the read. */
void tile_fill(const tile *t, int64_t array_offset, unsigned char *buffer);

/* The number of the tile's bytes in `buffer` that differ from the pattern. */
int64_t tile_check(const tile *t, int64_t array_offset, const unsigned char *buffer);

/* The committed subarray filetype of the tile, for a view displaced to the array's offset
 * (sizes must fit int). Free with MPI_Type_free. */
MPI_Datatype tile_filetype(const tile *t);

#endif
