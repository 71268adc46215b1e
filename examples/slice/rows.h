/* A row-major table of doubles in one file, read a row at a time (rows_io.c). */
#ifndef STAGIO_EXAMPLES_SLICE_ROWS_H
#define STAGIO_EXAMPLES_SLICE_ROWS_H

#include <mpi.h>
#include <stdint.h>

typedef struct {
  MPI_File file;
  int64_t rows;
  int columns;
} row_table;

/* Opens `path` on every rank of `comm`; the table's shape is passed in. 0 on success. */
int rows_open(MPI_Comm comm, const char *path, int64_t rows, int columns, row_table *table);
/* The byte offset of row `row`. */
MPI_Offset rows_offset(const row_table *table, int64_t row);
/* Reads row `row` into `values` (table->columns doubles), collectively. */
int rows_read(const row_table *table, int64_t row, double *values);
void rows_close(row_table *table);

#endif
