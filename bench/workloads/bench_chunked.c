/* Chunked read-compute(-write) applications: big matrix top-k search and Hill encryption.
 *
 * Rank r handles chunks [r*chunks, (r+1)*chunks) of the input, in order: read a chunk, work on
 * it, then a compute phase. Each rank streams through its own contiguous part of the file, the
 * access sequential prefetching and write-back suit.
 *   topk: the chunk is a run of doubles (the pattern's words converted to double); a running
 *         top-k (a min-heap) keeps the k largest. At the end the ranks' top-k are merged on
 *         rank 0, whose checksum is the "result", the same whatever the I/O path.
 *   hill: the chunk is encrypted with a 3x3 Hill cipher mod 256 (bytes in groups of 3) and the
 *         ciphertext written to --output at the same offset.
 * Verification: input bytes against the pattern; topk: the merged top-k against the k largest
 * words of the file; hill: decrypting the ciphertext in memory (and, with --verify-output, as
 * re-read from the output file) must give the pattern back.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_kernels.h"

static const char *const summary =
    "Chunked read-compute-write: rank r handles chunks [r*chunks, (r+1)*chunks) of --file in\n"
    "order. --app topk: running top-k of the chunk's doubles, merged on rank 0 at the end.\n"
    "--app hill: 3x3 Hill cipher mod 256, ciphertext written to --output at the same offset.";

/* det = 441, odd, so the key is invertible mod 256. */
static const int hill_key[3 * 3] = {6, 24, 1, 13, 16, 10, 20, 17, 15};

int main(int argc, char **argv) {
  const char *app = "topk", *output = NULL;
  int64_t chunk = 0, chunks = 32, k = 16;
  int verify_output = 0;
  const bench_option options[] = {
      {"app", BENCH_STRING, &app, "topk or hill"},
      {"chunk", BENCH_INT, &chunk, "chunk size in bytes; 0: 1M for topk, 768K for hill"},
      {"chunks", BENCH_INT, &chunks, "chunks per rank"},
      {"k", BENCH_INT, &k, "topk: how many largest values to keep"},
      {"output", BENCH_STRING, &output, "hill: the ciphertext file (required)"},
      {"verify-output", BENCH_FLAG, &verify_output,
       "hill: re-read, decrypt and check the output after the timed part"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "chunked", summary, options, argc, argv);
  bench_require(&run, !strcmp(app, "topk") || !strcmp(app, "hill"),
                "--app must be topk or hill, not '%s'", app);
  const int hill = !strcmp(app, "hill");
  if (chunk == 0) chunk = hill ? 768 << 10 : 1 << 20;
  bench_require(&run, chunk <= (1 << 30), "--chunk must be at most 1 GiB");
  bench_require(&run, chunks > 0, "--chunks must be positive");
  bench_require(&run, !hill || chunk % 3 == 0,
                "--chunk %lld: hill encrypts groups of 3 bytes, the chunk must be a multiple of 3",
                (long long)chunk);
  bench_require(&run, hill || chunk % 8 == 0, "--chunk %lld: topk needs a multiple of 8",
                (long long)chunk);
  bench_require(&run, hill || (k > 0 && k <= chunks * chunk / 8),
                "--k must be 1 to the number of doubles a rank reads");
  bench_require(&run, !hill || run.create_input || (output && strcmp(output, run.file) != 0),
                "hill needs --output PATH, other than --file");
  bench_require(&run, (double)chunk * chunks * run.ranks < 4e18, "the file would be too large");
  const int64_t file_size = chunk * chunks * run.ranks;
  if (run.create_input) return bench_create_input(&run, run.file, file_size);

  unsigned char *plain = bench_alloc(chunk), *cipher = bench_alloc(chunk);
  top_k top = {bench_alloc(hill ? 8 : k * 8), 0, k};
  hill_cipher cipher_3x3;
  hill_init(&cipher_3x3, 3, hill_key);

  MPI_File input, ciphertext = MPI_FILE_NULL;
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &input);
  if (hill) bench_open(&run, output, MPI_MODE_CREATE | MPI_MODE_WRONLY, &ciphertext);
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t offset = (run.rank * chunks + i) * chunk;
    bench_read_checked(&run, input, offset, plain, chunk);
    if (hill) {
      hill_apply(&cipher_3x3, 0, plain, cipher, chunk);
      bench_write_at(&run, ciphertext, offset, cipher, chunk);
      hill_apply(&cipher_3x3, 1, cipher, plain, chunk);
      run.verify_errors += bench_check_pattern(offset, plain, chunk);
    } else {
      top_k_chunk(&top, plain, chunk);
    }
    bench_compute(&run);
  }
  if (hill) bench_close(&run, &ciphertext);
  bench_close(&run, &input);
  if (!hill) top_k_finish(&run, &top, file_size);
  bench_stop(&run);

  if (hill && verify_output && !run.skip_io) {
    bench_verify_open(&run, output, &ciphertext);
    for (int64_t i = 0; i < chunks; ++i) {
      const int64_t offset = (run.rank * chunks + i) * chunk;
      const int64_t count = bench_verify_read(&run, ciphertext, offset, cipher, chunk);
      hill_apply(&cipher_3x3, 1, cipher, plain, count);
      run.verify_errors += bench_check_pattern(offset, plain, count - count % 3);
    }
    bench_verify_close(&run, &ciphertext);
  }
  free(plain);
  free(cipher);
  free(top.values);
  hill_free(&cipher_3x3);
  return bench_finish(&run);
}
