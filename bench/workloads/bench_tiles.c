/* Tiles of 2-D arrays in a file; see bench_tiles.h. */
#include "bench_tiles.h"

#include "bench_common.h"

span span_part(int64_t start, int64_t length, int parts, int index, int64_t overlap,
               int64_t limit) {
  int64_t from = start + length * index / parts - overlap;
  int64_t to = start + length * (index + 1) / parts + overlap;
  if (from < 0) from = 0;
  if (to > limit) to = limit;
  return (span){from, to > from ? to - from : 0};
}

tile tile_of(int64_t rows, int64_t cols, int64_t elem_size, span row, span col) {
  return (tile){rows, cols, elem_size, row, col, row.length * col.length * elem_size};
}

int64_t tile_row_offset(const tile *t, int64_t array_offset, int64_t i) {
  return array_offset + ((t->row.start + i) * t->cols + t->col.start) * t->elem_size;
}

void tile_fill(const tile *t, int64_t array_offset, unsigned char *buffer) {
  const int64_t row_bytes = t->col.length * t->elem_size;
  for (int64_t i = 0; i < t->row.length; ++i)
    bench_fill_pattern(tile_row_offset(t, array_offset, i), buffer + i * row_bytes, row_bytes);
}

int64_t tile_check(const tile *t, int64_t array_offset, const unsigned char *buffer) {
  const int64_t row_bytes = t->col.length * t->elem_size;
  int64_t wrong = 0;
  for (int64_t i = 0; i < t->row.length; ++i)
    wrong += bench_check_pattern(tile_row_offset(t, array_offset, i), buffer + i * row_bytes,
                                 row_bytes);
  return wrong;
}

MPI_Datatype tile_filetype(const tile *t) {
  MPI_Datatype element, filetype;
  MPI_Type_contiguous((int)t->elem_size, MPI_BYTE, &element);
  const int sizes[2] = {(int)t->rows, (int)t->cols};
  const int subsizes[2] = {(int)t->row.length, (int)t->col.length};
  const int starts[2] = {(int)t->row.start, (int)t->col.start};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, element, &filetype);
  MPI_Type_commit(&filetype);
  MPI_Type_free(&element);
  return filetype;
}
