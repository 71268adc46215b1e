/* BTIO-like: the I/O of NAS BT-IO in its "full" (collective MPI-IO) form.
 *
 * The solution is a --grid^3 array of cells of 5 doubles (40 bytes), x fastest in the file, then
 * y, then z. Each step a rank computes (--compute-ms), then the ranks write one solution
 * collectively: each sets a file view at step * solution_bytes whose filetype selects its own
 * cells (one MPI_Type_create_subarray per cell, joined by a struct) and calls
 * MPI_File_write_all. Step s so lands at s * solution_bytes, appending. The file is closed
 * after the last step; closing is part of the timed I/O.
 *
 * Decomposition. A square number of ranks P = p^2 uses BT's multi-partition: the array is cut
 * into p x p x p cells and rank (row, col) = (r / p, r % p) owns p of them, one per z layer c:
 * (x, y, z) = ((col + c) mod p, (row - c) mod p, c), so every layer is shared by all ranks
 * (NPB BT's make_set). Any other rank count (8, say) uses 2-D blocks: MPI_Dims_create(P, 2)
 * gives d0 x d1 (4 x 2 for 8), z is cut into d0 blocks and y into d1, x stays whole; one cell
 * per rank. The result line names the decomposition.
 *
 * --read reads the solutions back after the writes (reopened, the same views, read_all, then
 * compute, as BTIO's verification with compute phases between the reads, seed 004 VI-F);
 * --mode read only reads, from an input made with --create-input. Every byte is the data
 * pattern of its file offset (bench_common.h), so reads check each byte, and --verify-output
 * re-reads the written file untimed, in plain contiguous pieces.
 */
#include <stdio.h>
#include <string.h>

#include "bench_common.h"

static const char *const summary =
    "BTIO (full): --steps collective writes of a --grid^3 solution of 5-double cells, each\n"
    "after a compute phase, through subarray file views at step * solution size; --read\n"
    "reads them back. Square rank counts use BT's multi-partition, others 2-D blocks.";

enum { CELL_BYTES = 40, MAX_CELLS = 64 };

/* A cell: index 0 is x (fastest in the file), 1 is y, 2 is z. */
typedef struct {
  int64_t low[3], size[3];
} cell;

typedef struct {
  int64_t grid;          /* n: the array is n x n x n cells */
  int count;             /* this rank's cells, in z order */
  cell cells[MAX_CELLS];
  int64_t rank_bytes;    /* what this rank writes per step */
  char description[64];  /* "multi-partition 2x2", "blocks 4x2" */
} layout;

/* Part i of n cut into `parts` near-equal blocks, the larger ones first. */
static int64_t block_low(int64_t n, int64_t parts, int64_t i) {
  return i * (n / parts) + (i < n % parts ? i : n % parts);
}
static int64_t block_size(int64_t n, int64_t parts, int64_t i) {
  return n / parts + (i < n % parts ? 1 : 0);
}

static void set_axis(cell *c, int axis, int64_t n, int64_t parts, int64_t i) {
  c->low[axis] = block_low(n, parts, i);
  c->size[axis] = block_size(n, parts, i);
}

static int square_root(int ranks) {
  int p = 1;
  while ((p + 1) * (p + 1) <= ranks) ++p;
  return p * p == ranks ? p : 0;
}

static layout make_layout(int64_t grid, int ranks, int rank) {
  layout l;
  memset(&l, 0, sizeof l);
  l.grid = grid;
  const int p = square_root(ranks);
  if (p > 0 && p <= MAX_CELLS) {
    const int row = rank / p, col = rank % p;
    l.count = p;
    for (int c = 0; c < p; ++c) {
      set_axis(&l.cells[c], 0, grid, p, (col + c) % p);
      set_axis(&l.cells[c], 1, grid, p, (row - c + p) % p);
      set_axis(&l.cells[c], 2, grid, p, c);
    }
    snprintf(l.description, sizeof l.description, "multi-partition %dx%d", p, p);
  } else {
    int dims[2] = {0, 0};
    MPI_Dims_create(ranks, 2, dims);
    l.count = 1;
    set_axis(&l.cells[0], 0, grid, 1, 0);
    set_axis(&l.cells[0], 1, grid, dims[1], rank % dims[1]);
    set_axis(&l.cells[0], 2, grid, dims[0], rank / dims[1]);
    snprintf(l.description, sizeof l.description, "blocks %dx%d", dims[0], dims[1]);
  }
  for (int c = 0; c < l.count; ++c)
    l.rank_bytes += l.cells[c].size[0] * l.cells[c].size[1] * l.cells[c].size[2] * CELL_BYTES;
  return l;
}

/* The view of one solution: this rank's cells as subarrays of the whole array (each of extent
 * the whole solution), joined in z order so the filetype's offsets only grow, as a view needs. */
static MPI_Datatype solution_filetype(const layout *l) {
  MPI_Datatype cell_type, parts[MAX_CELLS], filetype;
  int lengths[MAX_CELLS];
  MPI_Aint displacements[MAX_CELLS];
  MPI_Type_contiguous(CELL_BYTES, MPI_BYTE, &cell_type);
  for (int c = 0; c < l->count; ++c) {
    const cell *k = &l->cells[c];
    /* C order: z slowest. */
    const int sizes[3] = {(int)l->grid, (int)l->grid, (int)l->grid};
    const int subsizes[3] = {(int)k->size[2], (int)k->size[1], (int)k->size[0]};
    const int starts[3] = {(int)k->low[2], (int)k->low[1], (int)k->low[0]};
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, cell_type, &parts[c]);
    lengths[c] = 1;
    displacements[c] = 0;
  }
  MPI_Type_create_struct(l->count, lengths, displacements, parts, &filetype);
  MPI_Type_commit(&filetype);
  for (int c = 0; c < l->count; ++c) MPI_Type_free(&parts[c]);
  MPI_Type_free(&cell_type);
  return filetype;
}

/* Fills this rank's buffer for one step with the pattern of the file offsets its bytes land
 * at (check = 0), or counts the bytes that differ from it (check = 1). The buffer holds the
 * cells in view order: cell by cell, each z-y row of it contiguous in x. */
static int64_t pattern_rows(const layout *l, int64_t solution_offset, unsigned char *buffer,
                            int check) {
  int64_t position = 0, wrong = 0;
  for (int c = 0; c < l->count; ++c) {
    const cell *k = &l->cells[c];
    const int64_t row_bytes = k->size[0] * CELL_BYTES;
    for (int64_t z = k->low[2]; z < k->low[2] + k->size[2]; ++z)
      for (int64_t y = k->low[1]; y < k->low[1] + k->size[1]; ++y) {
        const int64_t offset = solution_offset + ((z * l->grid + y) * l->grid + k->low[0]) *
                                                     CELL_BYTES;
        if (check)
          wrong += bench_check_pattern(offset, buffer + position, row_bytes);
        else
          bench_fill_pattern(offset, buffer + position, row_bytes);
        position += row_bytes;
      }
  }
  return wrong;
}

static void write_steps(bench_run *run, const layout *l, MPI_Datatype filetype,
                        int64_t solution_bytes, int64_t steps, unsigned char *buffer) {
  MPI_File file;
  bench_open(run, run->file, MPI_MODE_CREATE | MPI_MODE_WRONLY, &file);
  for (int64_t step = 0; step < steps; ++step) {
    bench_compute(run);
    pattern_rows(l, step * solution_bytes, buffer, 0);
    bench_set_view(run, file, step * solution_bytes, filetype);
    bench_write_view(run, file, buffer, l->rank_bytes);
  }
  bench_close(run, &file);
}

static void read_steps(bench_run *run, const layout *l, MPI_Datatype filetype,
                       int64_t solution_bytes, int64_t steps, unsigned char *buffer) {
  MPI_File file;
  bench_open(run, run->file, MPI_MODE_RDONLY, &file);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t offset = step * solution_bytes;
    bench_set_view(run, file, offset, filetype);
    const int64_t count = bench_read_view(run, file, buffer, l->rank_bytes);
    if (run->skip_io || run->skip_reads) pattern_rows(l, offset, buffer, 0);
    /* A short read is already counted; check only what came. */
    run->verify_errors += count < l->rank_bytes ? 0 : pattern_rows(l, offset, buffer, 1);
    bench_compute(run);
  }
  bench_close(run, &file);
}

/* Untimed: the whole file in 1 MiB pieces dealt round-robin to the ranks, checked. */
static void verify_file(bench_run *run, int64_t file_bytes) {
  const int64_t piece = 1 << 20;
  unsigned char *buffer = bench_alloc(piece);
  MPI_File file;
  bench_verify_open(run, run->file, &file);
  for (int64_t offset = run->rank * piece; offset < file_bytes; offset += run->ranks * piece) {
    const int64_t length = file_bytes - offset < piece ? file_bytes - offset : piece;
    const int64_t count = bench_verify_read(run, file, offset, buffer, length);
    run->verify_errors += bench_check_pattern(offset, buffer, count);
  }
  bench_verify_close(run, &file);
  free(buffer);
}

int main(int argc, char **argv) {
  const char *mode = "write";
  int64_t grid = 64, steps = 20;
  int read_back = 0, verify_output = 0;
  const bench_option options[] = {
      {"mode", BENCH_STRING, &mode, "write (then --read back), or read an input"},
      {"grid", BENCH_INT, &grid, "cells along each side of the cube (BTIO class A: 64)"},
      {"steps", BENCH_INT, &steps, "solutions written (or read), one per compute phase"},
      {"read", BENCH_FLAG, &read_back, "write mode: read every step back (timed), verified"},
      {"verify-output", BENCH_FLAG, &verify_output,
       "write mode: re-read and check the file after the timed part"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "btio", summary, options, argc, argv);
  /* BTIO "full" is collective by definition: every access is a _all call. */
  run.collective = 1;
  bench_require(&run, !strcmp(mode, "read") || !strcmp(mode, "write"),
                "--mode must be read or write, not '%s'", mode);
  const int writing = !strcmp(mode, "write");
  bench_require(&run, steps > 0, "--steps must be positive");
  bench_require(&run, grid >= run.ranks && grid <= 1024,
                "--grid must be at least the rank count (%d) and at most 1024", run.ranks);
  const int64_t solution_bytes = grid * grid * grid * CELL_BYTES;
  bench_require(&run, (double)solution_bytes * steps < 4e18, "the file would be too large");
  if (run.create_input) {
    if (writing) return bench_no_input_needed(&run);
    return bench_create_input(&run, run.file, solution_bytes * steps);
  }

  const layout l = make_layout(grid, run.ranks, run.rank);
  bench_require(&run, l.rank_bytes < (1LL << 31), "a rank's part must be under 2 GiB");
  MPI_Datatype filetype = solution_filetype(&l);
  unsigned char *buffer = bench_alloc(l.rank_bytes);

  bench_start(&run);
  if (writing) write_steps(&run, &l, filetype, solution_bytes, steps, buffer);
  if (!writing || read_back) read_steps(&run, &l, filetype, solution_bytes, steps, buffer);
  bench_stop(&run);

  if (writing && verify_output && !run.skip_io) verify_file(&run, solution_bytes * steps);
  snprintf(run.result, sizeof run.result,
           "{\"decomposition\": \"%s\", \"cells_per_rank\": %d, \"solution_bytes\": %lld}",
           l.description, l.count, (long long)solution_bytes);
  MPI_Type_free(&filetype);
  free(buffer);
  return bench_finish(&run);
}
