/* Samples rows of a table spread over the file (a stride co-prime with the row count, so
 * that each rank's rows are scattered), and prints each rank's mean of the sampled values.
 * The I/O sits in rows_io.c, a second translation unit.
 *
 *   rows_main FILE           prints the means
 *   rows_main FILE create    writes a test table (rank 0, with stdio)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

#define ROWS 257
#define COLUMNS 512
#define SAMPLES 40

static void create_input(const char *path) {
  FILE *out = fopen(path, "wb");
  for (long i = 0; out != NULL && i < (long)ROWS * COLUMNS; ++i) {
    double value = (double)(i % 1009) / 7.0;
    fwrite(&value, sizeof value, 1, out);
  }
  if (out != NULL) fclose(out);
}

/* The analysis of one row: a few smoothing passes, whose result feeds the mean. */
static double analyse(const double *values, int count) {
  double smooth = 0;
  for (int pass = 0; pass < 200; ++pass)
    for (int c = 0; c < count; ++c) smooth = 0.999 * smooth + 0.001 * values[c] / (1.0 + pass);
  return smooth;
}

static int64_t sample_row(int rank, int sample) {
  return ((int64_t)(rank * SAMPLES + sample) * 97 + 5) % ROWS;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: %s FILE [create]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  if (argc > 2 && strcmp(argv[2], "create") == 0) {
    if (rank == 0) create_input(argv[1]);
    MPI_Finalize();
    return 0;
  }
  row_table table;
  if (rows_open(MPI_COMM_WORLD, argv[1], ROWS, COLUMNS, &table) != MPI_SUCCESS) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double *values = malloc(COLUMNS * sizeof *values);
  double sum = 0;
  for (int s = 0; s < SAMPLES; ++s) {
    if (rows_read(&table, sample_row(rank, s), values) != MPI_SUCCESS) {
      fprintf(stderr, "read failed\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int c = 0; c < COLUMNS; ++c) sum += values[c];
    sum += analyse(values, COLUMNS) * 1e-12;
  }
  rows_close(&table);
  double *means = rank == 0 ? malloc(size * sizeof *means) : NULL;
  const double mean = sum / (SAMPLES * COLUMNS);
  MPI_Gather(&mean, 1, MPI_DOUBLE, means, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (int r = 0; rank == 0 && r < size; ++r) printf("rank %d mean %.9f\n", r, means[r]);
  free(means);
  free(values);
  MPI_Finalize();
  return 0;
}
