/* The row table's I/O (rows.h). */
#include "rows.h"

int rows_open(MPI_Comm comm, const char *path, int64_t rows, int columns, row_table *table) {
  table->rows = rows;
  table->columns = columns;
  return MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &table->file);
}

MPI_Offset rows_offset(const row_table *table, int64_t row) {
  return row * (MPI_Offset)table->columns * (MPI_Offset)sizeof(double);
}

int rows_read(const row_table *table, int64_t row, double *values) {
  if (row < 0 || row >= table->rows) return MPI_ERR_ARG;
  return MPI_File_read_at_all(table->file, rows_offset(table, row), values, table->columns,
                              MPI_DOUBLE, MPI_STATUS_IGNORE);
}

void rows_close(row_table *table) { MPI_File_close(&table->file); }
