/* views: file views made of non-contiguous filetypes (MPI 4.0 sections 14.3, 14.4.1).
 *
 * For each filetype (vector, indexed with zero-length blocks, darray, subarray, resized), every
 * rank sets a view with its own displacement or type and writes ints whose values are the
 * positions the standard says they land at, computed here from the type's definition, not
 * from MPI. Then: each rank reads its ints back through the view; every rank reads the whole
 * file without a view and finds each int at the position it names, and the sentinel (-1) that
 * rank 0 wrote first everywhere no view reaches. get_view and get_byte_offset are checked on
 * the way.
 */
#include "conformance.h"

/* Where int k of `rank`'s writes lands, in ints from the start of the file. */
typedef int64_t (*position_fn)(int rank, int k);

typedef struct {
  const char *name;
  MPI_Datatype filetype; /* this rank's, committed; freed by run_case */
  MPI_Offset displacement;
  int count;        /* ints each rank writes */
  int64_t extent;   /* ints the file must span (every rank's positions lie below) */
  position_fn position;
} view_case;

/* vector: 4 blocks of 2 ints, stride 2n, resized to tile every 8n ints; rank r starts at 2r. */
static int64_t vector_position(int rank, int k) {
  const int rep = k / 8, j = k % 8;
  return 2 * rank + (int64_t)rep * 8 * conf.nranks + (j / 2) * 2 * conf.nranks + j % 2;
}

/* indexed: blocks (length, displacement) (2,0) (0,1) (3,3) (0,5) (1,7) in a window of 8 ints;
 * rank r's window is at 8r, tiled every 8n. */
static int64_t indexed_position(int rank, int k) {
  static const int within[6] = {0, 1, 3, 4, 5, 7};
  return 8 * rank + (int64_t)(k / 6) * 8 * conf.nranks + within[k % 6];
}

/* darray: a 7 x 5 array of ints, rows in blocks and columns cyclic over a process grid from
 * MPI_Dims_create; C order. A rank's ints are its elements in file order. */
static int grid[2];
static int64_t darray_position(int rank, int k) {
  const int rows = 7, cols = 5;
  const int my_row = rank / grid[1], my_col = rank % grid[1];
  const int block = (rows + grid[0] - 1) / grid[0];
  int seen = 0;
  for (int r = my_row * block; r < rows && r < (my_row + 1) * block; r++) {
    for (int c = my_col; c < cols; c += grid[1]) {
      if (seen++ == k) return (int64_t)r * cols + c;
    }
  }
  return -1;
}
static int darray_count(int rank) {
  int count = 0;
  while (darray_position(rank, count) >= 0) count++;
  return count;
}

/* subarray: a 6 x (2n+1) array of ints; rank r owns columns 2r and 2r+1; the last column is
 * nobody's. */
static int64_t subarray_position(int rank, int k) {
  return (int64_t)(k / 2) * (2 * conf.nranks + 1) + 2 * rank + k % 2;
}

/* resized: 3 contiguous ints with an extent of 3n ints; rank r's displacement is 3r ints. */
static int64_t resized_position(int rank, int k) {
  return 3 * rank + (int64_t)(k / 3) * 3 * conf.nranks + k % 3;
}

static void run_case(view_case c) {
  char check[128];
  MPI_File file;
  char file_name[64];
  snprintf(file_name, sizeof file_name, "views.%s.dat", c.name);
  conf_remove(file_name);
  int err = conf_open(file_name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
  snprintf(check, sizeof check, "%s.open", c.name);
  conf_check(check, err == MPI_SUCCESS, conf_class_name(err), "%s", conf_class_name(err));
  if (err != MPI_SUCCESS) {
    MPI_Type_free(&c.filetype);
    return;
  }
  int *all = malloc(c.extent * sizeof *all);
  MPI_Status status;
  for (int64_t i = 0; i < c.extent; i++) all[i] = -1;
  if (conf.rank == 0) MPI_File_write_at(file, 0, all, (int)c.extent, MPI_INT, &status);
  conf_sync_barrier_sync(file);

  err = MPI_File_set_view(file, c.displacement, MPI_INT, c.filetype, "native", MPI_INFO_NULL);
  snprintf(check, sizeof check, "%s.set_view", c.name);
  conf_check(check, err == MPI_SUCCESS, conf_class_name(err), "%s", conf_class_name(err));

  /* get_view gives back what was set. */
  MPI_Offset displacement = -1;
  MPI_Datatype etype, filetype;
  char datarep[MPI_MAX_DATAREP_STRING + 1] = "";
  int view_err = MPI_File_get_view(file, &displacement, &etype, &filetype, datarep);
  int etype_size = 0, filetype_size = 0, expected_size = 0;
  if (view_err == MPI_SUCCESS) {
    MPI_Type_size(etype, &etype_size);
    MPI_Type_size(filetype, &filetype_size);
    MPI_Type_size(c.filetype, &expected_size);
    int combiner = 0, ints = 0, addresses = 0, types = 0;
    MPI_Type_get_envelope(filetype, &ints, &addresses, &types, &combiner);
    if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&filetype);
    MPI_Type_get_envelope(etype, &ints, &addresses, &types, &combiner);
    if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&etype);
  }
  snprintf(check, sizeof check, "%s.get_view", c.name);
  conf_check(check,
             view_err == MPI_SUCCESS && displacement == c.displacement && etype_size == 4 &&
                 filetype_size == expected_size && strcmp(datarep, "native") == 0,
             NULL, "%s, displacement %lld, etype size %d, filetype size %d of %d, datarep %s",
             conf_class_name(view_err), (long long)displacement, etype_size, filetype_size,
             expected_size, datarep);

  /* get_byte_offset of the view's last int. */
  MPI_Offset byte_offset = -1;
  err = MPI_File_get_byte_offset(file, c.count - 1, &byte_offset);
  const MPI_Offset expected_offset = c.count > 0 ? c.position(conf.rank, c.count - 1) * 4 : 0;
  snprintf(check, sizeof check, "%s.get_byte_offset", c.name);
  conf_check(check, err == MPI_SUCCESS && (c.count == 0 || byte_offset == expected_offset), NULL,
             "%s, offset %lld, expected %lld", conf_class_name(err), (long long)byte_offset,
             (long long)expected_offset);

  int *values = malloc((c.count + 1) * sizeof *values);
  for (int k = 0; k < c.count; k++) values[k] = (int)c.position(conf.rank, k);
  err = MPI_File_write_all(file, values, c.count, MPI_INT, &status);
  int written = -1;
  MPI_Get_count(&status, MPI_INT, &written);
  snprintf(check, sizeof check, "%s.write_all_count", c.name);
  conf_check(check, err == MPI_SUCCESS && written == c.count, NULL, "%s, count %d of %d",
             conf_class_name(err), written, c.count);
  conf_sync_barrier_sync(file);

  int *back = malloc((c.count + 1) * sizeof *back);
  memset(back, 0, (c.count + 1) * sizeof *back);
  err = MPI_File_read_at_all(file, 0, back, c.count, MPI_INT, &status);
  int first_wrong = -1;
  for (int k = 0; k < c.count && first_wrong < 0; k++) {
    if (back[k] != values[k]) first_wrong = k;
  }
  snprintf(check, sizeof check, "%s.read_back_through_view", c.name);
  conf_check(check, err == MPI_SUCCESS && first_wrong < 0, NULL, "%s, int %d differs",
             conf_class_name(err), first_wrong);

  /* The whole file without a view: each int where its value says, sentinels elsewhere. */
  err = MPI_File_set_view(file, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  if (err == MPI_SUCCESS) err = MPI_File_read_at(file, 0, all, (int)c.extent, MPI_INT, &status);
  char *covered = calloc(c.extent, 1);
  for (int rank = 0; rank < conf.nranks; rank++) {
    const int count = c.position == darray_position ? darray_count(rank) : c.count;
    for (int k = 0; k < count; k++) covered[c.position(rank, k)] = 1;
  }
  int64_t wrong_at = -1;
  for (int64_t i = 0; i < c.extent && wrong_at < 0; i++) {
    if (all[i] != (covered[i] ? i : -1)) wrong_at = i;
  }
  snprintf(check, sizeof check, "%s.file_layout", c.name);
  conf_check(check, err == MPI_SUCCESS && wrong_at < 0, NULL, "%s, int %lld holds %d",
             conf_class_name(err), (long long)wrong_at, wrong_at >= 0 ? all[wrong_at] : 0);
  free(covered);
  free(back);
  free(values);
  free(all);
  MPI_File_close(&file);
  MPI_Type_free(&c.filetype);
}

static MPI_Datatype resized(MPI_Datatype type, int64_t extent_ints) {
  MPI_Datatype result;
  MPI_Type_create_resized(type, 0, (MPI_Aint)extent_ints * 4, &result);
  MPI_Type_free(&type);
  MPI_Type_commit(&result);
  return result;
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "views");
  const int n = conf.nranks;

  MPI_Datatype vector;
  MPI_Type_vector(4, 2, 2 * n, MPI_INT, &vector);
  run_case((view_case){"vector", resized(vector, 8 * n), (MPI_Offset)conf.rank * 2 * 4, 16,
                       16 * n + 8, vector_position});

  const int lengths[5] = {2, 0, 3, 0, 1}, displacements[5] = {0, 1, 3, 5, 7};
  MPI_Datatype indexed;
  MPI_Type_indexed(5, lengths, displacements, MPI_INT, &indexed);
  run_case((view_case){"indexed_zero_length_blocks", resized(indexed, 8 * n),
                       (MPI_Offset)conf.rank * 8 * 4, 12, 16 * n + 8, indexed_position});

  grid[0] = grid[1] = 0;
  MPI_Dims_create(n, 2, grid);
  const int gsizes[2] = {7, 5}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 1};
  MPI_Datatype darray;
  MPI_Type_create_darray(n, conf.rank, 2, gsizes, distribs, dargs, grid, MPI_ORDER_C, MPI_INT,
                         &darray);
  MPI_Type_commit(&darray);
  run_case((view_case){"darray", darray, 0, darray_count(conf.rank), 7 * 5 + 4,
                       darray_position});

  const int sizes[2] = {6, 2 * n + 1}, subsizes[2] = {6, 2}, starts[2] = {0, 2 * conf.rank};
  MPI_Datatype subarray;
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &subarray);
  MPI_Type_commit(&subarray);
  run_case((view_case){"subarray", subarray, 0, 12, 6 * (2 * n + 1) + 4, subarray_position});

  MPI_Datatype three;
  MPI_Type_contiguous(3, MPI_INT, &three);
  run_case((view_case){"resized", resized(three, 3 * n), (MPI_Offset)conf.rank * 3 * 4, 9,
                       9 * n + 4, resized_position});
  return conf_end();
}
