/* Big matrix top-k search (seed 003, Experiment #1), without its I/O slice: preexec_topk.c
 * with the hand-written slice taken out, for stagio-slice to build it.
 *
 * The file is a matrix of doubles (the pattern's words converted to double) split into
 * --chunks chunks per rank, each rank's chunks contiguous. Each rank reads its chunks in order
 * and, for each, updates a running top-k and computes; at the end the ranks' top-k are merged
 * on rank 0.
 *
 * Result: the global top --k (their count, largest value and checksum), checked against the
 * k largest words of the file.
 */
#include "bench_kernels.h"
#include "bench_common.h"

static const char *const summary =
    "Top-k search: rank r reads chunks [r*chunks, (r+1)*chunks)\n"
    "of --file in order, keeps the k largest doubles, and the ranks' top-k are merged on\n"
    "rank 0.";

typedef struct {
  const bench_run *run;
  MPI_File file;
  int64_t chunk, chunks;
} topk_job;

static int64_t chunk_offset(const topk_job *job, int64_t i) {
  return (job->run->rank * job->chunks + i) * job->chunk;
}

int main(int argc, char **argv) {
  int64_t chunk = 1 << 20, chunks = 32, k = 30;
  const bench_option options[] = {
      {"chunk", BENCH_INT, &chunk, "chunk size in bytes (a multiple of 8)"},
      {"chunks", BENCH_INT, &chunks, "chunks per rank"},
      {"k", BENCH_INT, &k, "how many largest values to find"},
      {NULL, BENCH_FLAG, NULL, NULL},
  };
  bench_run run;
  bench_begin(&run, "preexec_topk", summary, options, argc, argv);
  bench_require(&run, chunk > 0 && chunk <= (1 << 30) && chunk % 8 == 0,
                "--chunk must be a positive multiple of 8, at most 1 GiB");
  bench_require(&run, chunks > 0, "--chunks must be positive");
  bench_require(&run, (double)chunk * chunks * run.ranks < 4e18, "the file would be too large");
  bench_require(&run, k > 0 && k <= chunks * chunk / 8,
                "--k must be 1 to the number of doubles a rank reads");
  const int64_t file_size = chunk * chunks * run.ranks;
  if (run.create_input) return bench_create_input(&run, run.file, file_size);

  unsigned char *buffer = bench_alloc(chunk);
  top_k top = {bench_alloc(k * 8), 0, k};
  topk_job job = {&run, MPI_FILE_NULL, chunk, chunks};
  bench_start(&run);
  bench_open(&run, run.file, MPI_MODE_RDONLY, &job.file);
  for (int64_t i = 0; i < chunks; ++i) {
    bench_read_checked(&run, job.file, chunk_offset(&job, i), buffer, chunk);
    top_k_chunk(&top, buffer, chunk);
    bench_compute(&run);
  }
  bench_close(&run, &job.file);
  bench_stop(&run);

  top_k_finish(&run, &top, file_size);
  free(buffer);
  free(top.values);
  return bench_finish(&run);
}
