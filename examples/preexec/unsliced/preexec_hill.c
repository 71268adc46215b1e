/* Hill encryption of a large file in chunks, with pre-execution prefetching (seed 003,
 * Experiment #2).
 *
 * The key is an invertible --key-size x --key-size matrix mod 256 (hill_make_key), applied to
 * blocks of key-size bytes. Rank r handles chunks [r*chunks, (r+1)*chunks) of the input. Round
 * 1 reads each chunk of the input, encrypts it and writes the ciphertext to --output at the
 * same offset; each further round (--rounds) reads the output chunk back, encrypts it again
 * and writes it back in place. A compute phase follows each chunk.
 *
 * The I/O slice announces the same reads and writes. From round 2 on, each of its reads
 * overlaps the range its write of the round before recorded as dirty, so stagio holds that
 * fetch until the main thread has made the write (delayed synchronization, seed 001): without
 * it the helper would fetch the old bytes.
 *
 * Checks: round 1's input against the pattern; later rounds' reads against the hash of what
 * the round before wrote there; with --verify-output, the output file re-read after the timed
 * part and decrypted --rounds times must give the pattern. Result: a hash of the final
 * ciphertext (per chunk, in chunk and then rank order).
 */
#include <stdio.h>
#include <string.h>

#include "bench_kernels.h"
#include "bench_common.h"

static const char *const summary =
    "Hill encryption: rank r encrypts chunks\n"
    "[r*chunks, (r+1)*chunks) of --file into --output (round 1), then re-encrypts the output\n"
    "in place (rounds 2..--rounds), a compute phase after each chunk.\n"
    "STAGIO_PREEXEC=off|pp|ppis chooses the helper's mode.";

typedef struct {
  const bench_run *run;
  MPI_File input, output;
  int64_t chunk, chunks, rounds;
} hill_job;

static int64_t chunk_offset(const hill_job *job, int64_t i) {
  return (job->run->rank * job->chunks + i) * job->chunk;
}

/* Round 1 reads the input, later rounds the output. */
static MPI_File round_source(const hill_job *job, int64_t round) {
  return round == 1 ? job->input : job->output;
}

/* --verify-output: re-read each chunk of the output, decrypt it `passes` times, compare with
 * the pattern. Untimed, after bench_stop. */
static void verify_output(bench_run *run, const hill_job *job, const char *path,
                          const hill_cipher *cipher, int64_t passes, unsigned char *a,
                          unsigned char *b) {
  MPI_File file;
  bench_verify_open(run, path, &file);
  for (int64_t i = 0; i < job->chunks; ++i) {
    const int64_t offset = chunk_offset(job, i);
    const int64_t count = bench_verify_read(run, file, offset, a, job->chunk);
    for (int64_t pass = 0; pass < passes; ++pass) {
      hill_apply(cipher, 1, a, b, count);
      unsigned char *t = a;
      a = b;
      b = t;
    }
    run->verify_errors += bench_check_pattern(offset, a, count - count % cipher->n);
  }
  bench_verify_close(run, &file);
}

int main(int argc, char **argv) {
  const char *output = NULL;
  int64_t chunk = 768 << 10, chunks = 32, key_size = 8, rounds = 2;
  int verify = 0;
  const bench_option options[] = {
      {"chunk", BENCH_INT, &chunk, "chunk size in bytes (a multiple of --key-size)"},
      {"chunks", BENCH_INT, &chunks, "chunks per rank"},
      {"key-size", BENCH_INT, &key_size, "n of the n x n key matrix: bytes per block"},
      {"rounds", BENCH_INT, &rounds, "encryption passes; rounds after the first are in place"},
      {"output", BENCH_STRING, &output, "the ciphertext file (required)"},
      {"verify-output", BENCH_FLAG, &verify,
       "re-read, decrypt and check the output after the timed part"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "preexec_hill", summary, options, argc, argv);
  bench_require(&run, key_size > 0 && key_size <= 256, "--key-size must be 1 to 256");
  bench_require(&run, chunk > 0 && chunk <= (1 << 30) && chunk % key_size == 0,
                "--chunk must be a positive multiple of --key-size, at most 1 GiB");
  bench_require(&run, chunks > 0, "--chunks must be positive");
  bench_require(&run, rounds > 0, "--rounds must be positive");
  bench_require(&run, (double)chunk * chunks * run.ranks < 4e18, "the file would be too large");
  bench_require(&run, run.create_input || (output && strcmp(output, run.file) != 0),
                "--output PATH is required, other than --file");
  if (run.create_input) return bench_create_input(&run, run.file, chunk * chunks * run.ranks);

  int *key = malloc(sizeof(int) * key_size * key_size);
  hill_make_key((int)key_size, key);
  hill_cipher cipher;
  hill_init(&cipher, (int)key_size, key); /* always invertible: see hill_make_key */
  free(key);
  unsigned char *text = bench_alloc(chunk), *encrypted = bench_alloc(chunk);
  uint64_t *written = bench_alloc(8 * chunks); /* hash of what the last round wrote, per chunk */
  hill_job job = {&run, MPI_FILE_NULL, MPI_FILE_NULL, chunk, chunks, rounds};

  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &job.input);
  bench_open(&run, output, MPI_MODE_CREATE | MPI_MODE_RDWR, &job.output);
  for (int64_t round = 1; round <= rounds; ++round)
    for (int64_t i = 0; i < chunks; ++i) {
      const int64_t offset = chunk_offset(&job, i);
      const int64_t count = bench_read_at(&run, round_source(&job, round), offset, text, chunk);
      if (round == 1)
        run.verify_errors += bench_check_pattern(offset, text, count);
      else if (!run.skip_io && !run.skip_reads) /* those "read" the pattern every round */
        run.verify_errors += bench_hash(BENCH_HASH_INIT, text, chunk) == written[i] ? 0 : chunk;
      hill_apply(&cipher, 0, text, encrypted, chunk);
      bench_write_at(&run, job.output, offset, encrypted, chunk);
      written[i] = bench_hash(BENCH_HASH_INIT, encrypted, chunk);
      bench_compute(&run);
    }
  bench_close(&run, &job.output);
  bench_close(&run, &job.input);
  bench_stop(&run);

  /* With --skip-reads every round encrypted the pattern once. */
  if (verify && !run.skip_io)
    verify_output(&run, &job, output, &cipher, run.skip_reads ? 1 : rounds, text, encrypted);
  const uint64_t hash = bench_hash_ranks(bench_hash(BENCH_HASH_INIT, written, 8 * chunks));
  snprintf(run.result, sizeof run.result,
           "{\"key_size\": %lld, \"rounds\": %lld, \"checksum\": \"%016llx\"}",
           (long long)key_size, (long long)rounds, (unsigned long long)hash);
  hill_free(&cipher);
  free(text);
  free(encrypted);
  free(written);
  return bench_finish(&run);
}
