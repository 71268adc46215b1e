/* Shared computations of the application workloads; see bench_kernels.h. */
#include "bench_kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checksums ---- */

uint64_t bench_hash(uint64_t hash, const void *bytes, int64_t length) {
  const unsigned char *p = bytes;
  for (int64_t i = 0; i < length; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

uint64_t bench_hash_ranks(uint64_t mine) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  uint64_t *all = rank == 0 ? malloc(sizeof(uint64_t) * ranks) : NULL;
  MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  const uint64_t hash = rank == 0 ? bench_hash(BENCH_HASH_INIT, all, 8 * (int64_t)ranks) : 0;
  free(all);
  return hash;
}

/* ---- PBench ---- */

void pbench_matrix_check(bench_run *run, pbench_matrix *m) {
  bench_require(run, m->rows > 0 && m->cols > 0, "--rows and --cols must be positive");
  bench_require(run, m->cols <= (1 << 27),
                "--cols %lld: a row must fit one read of 1 GiB at most", (long long)m->cols);
  bench_require(run, m->rows <= (INT64_C(1) << 62) / (m->cols * 8), "the matrix is too large");
  m->row_bytes = m->cols * 8;
}

int64_t pbench_next_row(const pbench_matrix *m, bench_rng *rng) {
  return (int64_t)bench_rng_below(rng, m->rows) * m->row_bytes;
}

/* ---- top-k ---- */

static void swap_values(double *a, double *b) {
  const double t = *a;
  *a = *b;
  *b = t;
}

void top_k_offer(top_k *top, double value) {
  double *heap = top->values;
  if (top->count < top->capacity) {
    int64_t i = top->count++;
    heap[i] = value;
    for (; i > 0 && heap[(i - 1) / 2] > heap[i]; i = (i - 1) / 2)
      swap_values(&heap[i], &heap[(i - 1) / 2]);
    return;
  }
  if (value <= heap[0]) return;
  heap[0] = value;
  for (int64_t i = 0;;) {
    int64_t smallest = i;
    const int64_t left = 2 * i + 1, right = left + 1;
    if (left < top->count && heap[left] < heap[smallest]) smallest = left;
    if (right < top->count && heap[right] < heap[smallest]) smallest = right;
    if (smallest == i) break;
    swap_values(&heap[i], &heap[smallest]);
    i = smallest;
  }
}

void top_k_chunk(top_k *top, const unsigned char *chunk, int64_t length) {
  for (int64_t i = 0; i + 8 <= length; i += 8) {
    uint64_t word;
    memcpy(&word, chunk + i, 8);
    top_k_offer(top, (double)word);
  }
}

static int descending(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

void top_k_finish(bench_run *run, top_k *top, int64_t file_size) {
  qsort(top->values, top->count, sizeof(double), descending);
  const int k = (int)top->capacity;
  double *all = run->rank == 0 ? malloc(sizeof(double) * k * run->ranks) : NULL;
  MPI_Gather(top->values, k, MPI_DOUBLE, all, k, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (run->rank != 0) return;
  qsort(all, (size_t)k * run->ranks, sizeof(double), descending);
  for (int i = 0; i < k; ++i) run->verify_errors += all[i] != (double)(file_size - 8 * (i + 1));
  snprintf(run->result, sizeof run->result,
           "{\"k\": %d, \"max\": %.17g, \"checksum\": \"%016llx\"}", k, all[0],
           (unsigned long long)bench_hash(BENCH_HASH_INIT, all, 8 * (int64_t)k));
  free(all);
}

/* ---- Hill cipher ---- */

/* Gauss-Jordan elimination mod 256 on [matrix | identity], n rows of 2n. Odd numbers are the
 * units mod 256, and a matrix is invertible mod 256 exactly when it is mod 2, so each column
 * has an odd pivot unless the determinant is even. */
static int invert_mod_256(int n, const unsigned char *matrix, unsigned char *inverse) {
  const int width = 2 * n;
  unsigned char *rows = calloc((size_t)n * width, 1);
  for (int i = 0; i < n; ++i) {
    memcpy(rows + i * width, matrix + i * n, n);
    rows[i * width + n + i] = 1;
  }
  int ok = 1;
  for (int col = 0; col < n && ok; ++col) {
    int pivot = col;
    while (pivot < n && !(rows[pivot * width + col] & 1)) ++pivot;
    if (pivot == n) {
      ok = 0;
      break;
    }
    unsigned char *p = rows + col * width;
    for (int j = 0; j < width; ++j) {
      const unsigned char t = p[j];
      p[j] = rows[pivot * width + j];
      rows[pivot * width + j] = t;
    }
    unsigned scale = 1;
    while (((p[col] * scale) & 255) != 1) scale += 2;
    for (int j = 0; j < width; ++j) p[j] = (unsigned char)(p[j] * scale);
    for (int row = 0; row < n; ++row) {
      unsigned char *r = rows + row * width;
      const unsigned factor = r[col];
      if (row == col || factor == 0) continue;
      for (int j = 0; j < width; ++j) r[j] = (unsigned char)(r[j] - factor * p[j]);
    }
  }
  for (int i = 0; i < n && ok; ++i) memcpy(inverse + i * n, rows + i * width + n, n);
  free(rows);
  return ok;
}

int hill_init(hill_cipher *cipher, int n, const int *key) {
  cipher->n = n;
  cipher->key = malloc((size_t)n * n);
  cipher->inverse = malloc((size_t)n * n);
  for (int i = 0; i < n * n; ++i) cipher->key[i] = (unsigned char)(key[i] & 255);
  return invert_mod_256(n, cipher->key, cipher->inverse);
}

void hill_make_key(int n, int *key) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      unsigned sum = 0; /* (U L)[i][j] = sum over m >= max(i, j) of U[i][m] L[m][j] */
      for (int m = i > j ? i : j; m < n; ++m) {
        const unsigned upper = m == i ? 1 : (unsigned)(7 * i + 13 * m + 3);
        const unsigned lower = m == j ? 1 : (unsigned)(11 * m + 5 * j + 1);
        sum += upper * lower;
      }
      key[i * n + j] = (int)(sum & 255);
    }
}

void hill_free(hill_cipher *cipher) {
  free(cipher->key);
  free(cipher->inverse);
}

void hill_apply(const hill_cipher *cipher, int decrypt, const unsigned char *in,
                unsigned char *out, int64_t length) {
  const int n = cipher->n;
  const unsigned char *key = decrypt ? cipher->inverse : cipher->key;
  for (int64_t i = 0; i + n <= length; i += n)
    for (int row = 0; row < n; ++row) {
      unsigned sum = 0;
      for (int j = 0; j < n; ++j) sum += (unsigned)key[row * n + j] * in[i + j];
      out[i + row] = (unsigned char)sum;
    }
}
