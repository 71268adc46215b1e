/* Tile 2-D convolution with FFTs, with pre-execution prefetching (seed 001, section VI-B).
 *
 * The file holds --frames frames one after the other. A frame is a grid of tiles of
 * --tile x --tile doubles, 2 tile rows by one tile column per rank, stored row-major as one
 * (2 N) x (ranks N) array: rank r owns the two tiles of column r, tile 1 above tile 2. For each
 * frame each rank reads its two tiles, each through a subarray file view (set_view, then one
 * read, a collective one with --collective), and convolves them: 2-D FFT of each, pointwise
 * product, inverse 2-D FFT (FFTW, real-to-complex). Then a compute phase.
 *
 * The I/O slice sets the same views (sharing the program's committed filetypes, read only)
 * and announces the same reads, frame after frame.
 *
 * Checks: every tile byte against the pattern, and the sum of each convolution against the
 * product of the tiles' sums (a property of circular convolution). Result: a hash over the
 * convolutions' values rounded to 1e-6, per rank in frame order, then over the ranks.
 */
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_tiles.h"
#include "bench_common.h"

static const char *const summary =
    "Tile 2-D convolution: each frame of --file is a grid of\n"
    "--tile x --tile tiles of doubles, 2 per rank; each rank reads its two tiles of every\n"
    "frame through subarray views and convolves them with FFTs (FFTW), then computes.\n"
    "Input size: frames*2*ranks*tile*tile*8. STAGIO_PREEXEC=off|pp|ppis chooses the mode.";

typedef struct {
  const bench_run *run;
  MPI_File file;
  MPI_Datatype filetypes[2]; /* of this rank's tile 1 and tile 2 */
  int64_t frames, frame_bytes, tile_bytes;
} tilefft_job;

/* The convolution of two n x n tiles of doubles, with plans made once: in[t] -> spectrum[t]
 * forward, spectrum[0] -> out backward (which overwrites spectrum[0]). */
typedef struct {
  int n;
  double *in[2], *out;
  fftw_complex *spectrum[2];
  fftw_plan forward[2], backward;
} convolution;

static void convolution_init(convolution *c, int n) {
  const size_t reals = (size_t)n * n, complexes = (size_t)n * (n / 2 + 1);
  c->n = n;
  c->out = fftw_alloc_real(reals);
  for (int t = 0; t < 2; ++t) {
    c->in[t] = fftw_alloc_real(reals);
    c->spectrum[t] = fftw_alloc_complex(complexes);
    c->forward[t] = fftw_plan_dft_r2c_2d(n, n, c->in[t], c->spectrum[t], FFTW_ESTIMATE);
  }
  c->backward = fftw_plan_dft_c2r_2d(n, n, c->spectrum[0], c->out, FFTW_ESTIMATE);
}

static void convolution_free(convolution *c) {
  fftw_destroy_plan(c->backward);
  for (int t = 0; t < 2; ++t) {
    fftw_destroy_plan(c->forward[t]);
    fftw_free(c->in[t]);
    fftw_free(c->spectrum[t]);
  }
  fftw_free(c->out);
}

/* Element values from the pattern's words: small, finite and exact whatever the word. */
static void tile_values(const unsigned char *bytes, int64_t count, double *values) {
  for (int64_t i = 0; i < count; ++i) {
    uint64_t word;
    memcpy(&word, bytes + 8 * i, 8);
    values[i] = (double)(word % 1021) / 1021.0 - 0.5;
  }
}

static double sum(const double *values, int64_t count) {
  double total = 0;
  for (int64_t i = 0; i < count; ++i) total += values[i];
  return total;
}

/* Convolves the tiles in c->in into c->out, returns 1 if its sum is not the product of the
 * tiles' sums (up to rounding), and adds the values, rounded, to *hash. */
static int convolve(convolution *c, uint64_t *hash) {
  const int64_t reals = (int64_t)c->n * c->n, complexes = (int64_t)c->n * (c->n / 2 + 1);
  for (int t = 0; t < 2; ++t) fftw_execute(c->forward[t]);
  for (int64_t i = 0; i < complexes; ++i) {
    const double *a = c->spectrum[0][i], *b = c->spectrum[1][i];
    const double re = a[0] * b[0] - a[1] * b[1], im = a[0] * b[1] + a[1] * b[0];
    c->spectrum[0][i][0] = re / reals; /* FFTW's transforms are unnormalized */
    c->spectrum[0][i][1] = im / reals;
  }
  fftw_execute(c->backward);
  for (int64_t i = 0; i < reals; ++i) {
    const long long rounded = llround(c->out[i] * 1e6);
    *hash = bench_hash(*hash, &rounded, sizeof rounded);
  }
  const double expected = sum(c->in[0], reals) * sum(c->in[1], reals);
  return fabs(sum(c->out, reals) - expected) > 1e-9 * reals * reals + 1e-9 * fabs(expected);
}

int main(int argc, char **argv) {
  int64_t n = 256, frames = 16;
  const bench_option options[] = {
      {"tile", BENCH_INT, &n, "N: a tile is N x N doubles"},
      {"frames", BENCH_INT, &frames, "frames; each rank convolves its two tiles of each"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "preexec_tilefft", summary, options, argc, argv);
  bench_require(&run, frames > 0, "--frames must be positive");
  /* One read of a whole tile; MPI_Type_create_subarray takes int sizes. */
  bench_require(&run, n > 0 && n * n * 8 < (INT64_C(1) << 31) && n * run.ranks <= (1 << 30),
                "--tile must be positive, a tile under 2 GiB, and tile * ranks at most 2^30");
  const int64_t tile_bytes = n * n * 8, frame_bytes = 2 * tile_bytes * run.ranks;
  bench_require(&run, (double)frame_bytes * frames < 4e18, "the file would be too large");
  if (run.create_input) return bench_create_input(&run, run.file, frame_bytes * frames);

  tile tiles[2];
  tilefft_job job = {&run, MPI_FILE_NULL, {0, 0}, frames, frame_bytes, tile_bytes};
  unsigned char *raw[2];
  for (int t = 0; t < 2; ++t) {
    tiles[t] = tile_of(2 * n, n * run.ranks, 8, (span){t * n, n}, (span){run.rank * n, n});
    job.filetypes[t] = tile_filetype(&tiles[t]);
    raw[t] = bench_alloc(tile_bytes);
  }
  convolution conv;
  convolution_init(&conv, (int)n);
  uint64_t hash = BENCH_HASH_INIT;

  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &job.file);
  for (int64_t frame = 0; frame < frames; ++frame) {
    const int64_t frame_offset = frame * frame_bytes;
    for (int t = 0; t < 2; ++t) {
      bench_set_view(&run, job.file, frame_offset, job.filetypes[t]);
      const int64_t count = bench_read_view(&run, job.file, raw[t], tile_bytes);
      if (run.skip_io || run.skip_reads) tile_fill(&tiles[t], frame_offset, raw[t]);
      /* A short read is already counted; check only what came. */
      run.verify_errors += count < tile_bytes ? 0 : tile_check(&tiles[t], frame_offset, raw[t]);
      tile_values(raw[t], n * n, conv.in[t]);
    }
    run.verify_errors += convolve(&conv, &hash);
    bench_compute(&run);
  }
  bench_close(&run, &job.file);
  bench_stop(&run);

  hash = bench_hash_ranks(hash);
  snprintf(run.result, sizeof run.result,
           "{\"tile\": %lld, \"frames\": %lld, \"checksum\": \"%016llx\"}", (long long)n,
           (long long)frames, (unsigned long long)hash);
  convolution_free(&conv);
  for (int t = 0; t < 2; ++t) {
    MPI_Type_free(&job.filetypes[t]);
    free(raw[t]);
  }
  return bench_finish(&run);
}
