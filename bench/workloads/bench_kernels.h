/* What the application workloads share with the pre-execution examples (examples/preexec),
 * which are the same programs with an I/O slice: a hash for result checksums, PBench's matrix,
 * a running top-k and the Hill cipher. None of them does I/O.
 */
#ifndef STAGIO_BENCH_KERNELS_H
#define STAGIO_BENCH_KERNELS_H

#include <stdint.h>

#include "bench_common.h"

/* ---- checksums: FNV-1a, 64 bits ---- */

#define BENCH_HASH_INIT 1469598103934665603ull

uint64_t bench_hash(uint64_t hash, const void *bytes, int64_t length);

/* Every rank's `mine`, hashed in rank order on rank 0 (collective; 0 on the other ranks).
 * Rank order, not a sum, so that ranks that swapped their data would show. */
uint64_t bench_hash_ranks(uint64_t mine);

/* ---- PBench: random rows of a --rows x --cols matrix of doubles ---- */

typedef struct {
  int64_t rows, cols, reads; /* the options */
  int64_t row_bytes;         /* set by pbench_matrix_check */
} pbench_matrix;

/* The matrix's options for a workload's table; the values `m` holds are the defaults. */
#define PBENCH_MATRIX_OPTIONS(m)                                       \
  {"rows", BENCH_INT, &(m).rows, "matrix rows"},                       \
  {"cols", BENCH_INT, &(m).cols, "matrix columns (doubles per row)"}, \
  {"reads", BENCH_INT, &(m).reads, "rows each rank reads"}

/* Validates the options (bench_require) and sets row_bytes. */
void pbench_matrix_check(bench_run *run, pbench_matrix *m);

/* The file offset of the next row to read, drawn from `rng`. */
int64_t pbench_next_row(const pbench_matrix *m, bench_rng *rng);

/* ---- top-k: a min-heap of the k largest values seen ---- */

typedef struct {
  double *values;
  int64_t count, capacity;
} top_k;

void top_k_offer(top_k *top, double value);

/* Offers each whole 8-byte word of `chunk`, as a uint64 converted to double. */
void top_k_chunk(top_k *top, const unsigned char *chunk, int64_t length);

/* Merges the ranks' top-k on rank 0 (collective), checks it against the k largest words of a
 * pattern file of `file_size` bytes read whole (its last k words) into verify_errors, and sets
 * the "result": {"k", "max", "checksum" of the k values}. */
void top_k_finish(bench_run *run, top_k *top, int64_t file_size);

/* ---- Hill cipher: c = K p mod 256 over blocks of n bytes ---- */

typedef struct {
  int n;
  unsigned char *key, *inverse; /* n x n, row-major */
} hill_cipher;

/* Takes a copy of the n x n `key` and computes its inverse mod 256. Returns 0 when the key is
 * not invertible (its determinant is even). */
int hill_init(hill_cipher *cipher, int n, const int *key);

/* A key of any size that is always invertible: unit upper times unit lower triangular mod 256
 * (determinant 1), with entries from a fixed formula, so every rank and run has the same key. */
void hill_make_key(int n, int *key);

void hill_free(hill_cipher *cipher);

/* Encrypts (or, with `decrypt`, decrypts) the whole blocks of `in` into `out`; the bytes of
 * a last partial block are left as they are in `out`. */
void hill_apply(const hill_cipher *cipher, int decrypt, const unsigned char *in,
                unsigned char *out, int64_t length);

#endif
