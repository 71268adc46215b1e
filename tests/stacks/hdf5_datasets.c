/* Parallel HDF5 over MPI-IO (H5Pset_fapl_mpio), written and read as an application does.
 *
 *   hdf5_datasets FILE
 *
 * Creates FILE with four 2-D datasets of doubles, each rank owning a band of rows: contiguous
 * and chunked, each written collectively or independently (H5Pset_dxpl_mpio), in two steps of
 * half a band, with an attribute on each. Then reopens the file read-only, and every rank reads
 * its neighbour's band, every other column (a strided hyperslab), in the dataset's mode, and
 * checks every value. Rank 0 prints a checksum of what each rank read, in rank order.
 * Object modification times are off (H5Pset_obj_track_times), so that two runs write the same
 * bytes: run plain and under stagio, the files and the output must be identical.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kDatasets = 4, kRowsPerRank = 48, kCols = 320, kChunkRows = 16, kChunkCols = 64 };
static const char *const kNames[kDatasets] = {"contiguous_collective", "contiguous_independent",
                                              "chunked_collective", "chunked_independent"};
static int rank = 0, ranks = 1;

#define CHECK(call)                                                                       \
  do {                                                                                    \
    if ((call) < 0) {                                                                     \
      fprintf(stderr, "hdf5_datasets: rank %d: %s failed (line %d)\n", rank, #call, __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

static double value(int dataset, hsize_t row, hsize_t col) {
  return dataset * 1e7 + (double)row * 1e3 + (double)col;
}

static int collective(int dataset) { return dataset % 2 == 0; }

static hid_t transfer_list(int dataset) {
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  CHECK(H5Pset_dxpl_mpio(dxpl, collective(dataset) ? H5FD_MPIO_COLLECTIVE
                                                   : H5FD_MPIO_INDEPENDENT));
  return dxpl;
}

static hid_t file_access(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  return fapl;
}

static void write_dataset(hid_t file, int dataset) {
  hsize_t dims[2] = {(hsize_t)kRowsPerRank * ranks, kCols};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  CHECK(H5Pset_obj_track_times(dcpl, 0));
  if (dataset >= 2) {
    hsize_t chunk[2] = {kChunkRows, kChunkCols};
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
  }
  hid_t dset = H5Dcreate2(file, kNames[dataset], H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                          H5P_DEFAULT);
  CHECK(dset);
  hid_t dxpl = transfer_list(dataset);
  const hsize_t half = kRowsPerRank / 2;
  double *buffer = malloc(sizeof(double) * half * kCols);
  for (hsize_t step = 0; step < 2; ++step) {
    hsize_t start[2] = {(hsize_t)rank * kRowsPerRank + step * half, 0}, count[2] = {half, kCols};
    for (hsize_t r = 0; r < half; ++r) {
      for (hsize_t c = 0; c < kCols; ++c) buffer[r * kCols + c] = value(dataset, start[0] + r, c);
    }
    hid_t memory = H5Screate_simple(2, count, NULL);
    hid_t selection = H5Dget_space(dset);
    CHECK(H5Sselect_hyperslab(selection, H5S_SELECT_SET, start, NULL, count, NULL));
    CHECK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, memory, selection, dxpl, buffer));
    H5Sclose(selection);
    H5Sclose(memory);
  }
  // An attribute: HDF5 metadata, written collectively.
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t attribute = H5Acreate2(dset, "ranks", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
  CHECK(attribute);
  CHECK(H5Awrite(attribute, H5T_NATIVE_INT, &ranks));
  H5Aclose(attribute);
  H5Sclose(scalar);
  free(buffer);
  H5Pclose(dxpl);
  H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* Reads the neighbour's band, every other column; returns the number of wrong values and adds
 * the bytes read to *hash (FNV-1a). */
static long read_dataset(hid_t file, int dataset, uint64_t *hash) {
  const int neighbour = (rank + 1) % ranks;
  hid_t dset = H5Dopen2(file, kNames[dataset], H5P_DEFAULT);
  CHECK(dset);
  int stored_ranks = 0;
  hid_t attribute = H5Aopen(dset, "ranks", H5P_DEFAULT);
  CHECK(H5Aread(attribute, H5T_NATIVE_INT, &stored_ranks));
  H5Aclose(attribute);
  long wrong = stored_ranks != ranks;
  hsize_t start[2] = {(hsize_t)neighbour * kRowsPerRank, 0}, stride[2] = {1, 2};
  hsize_t count[2] = {kRowsPerRank, kCols / 2};
  hid_t selection = H5Dget_space(dset);
  CHECK(H5Sselect_hyperslab(selection, H5S_SELECT_SET, start, stride, count, NULL));
  hid_t memory = H5Screate_simple(2, count, NULL);
  double *buffer = malloc(sizeof(double) * count[0] * count[1]);
  hid_t dxpl = transfer_list(dataset);
  CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, memory, selection, dxpl, buffer));
  for (hsize_t r = 0; r < count[0]; ++r) {
    for (hsize_t c = 0; c < count[1]; ++c) {
      wrong += buffer[r * count[1] + c] != value(dataset, start[0] + r, 2 * c);
    }
  }
  const unsigned char *bytes = (const unsigned char *)buffer;
  for (size_t i = 0; i < sizeof(double) * count[0] * count[1]; ++i) {
    *hash = (*hash ^ bytes[i]) * 1099511628211ull;
  }
  free(buffer);
  H5Pclose(dxpl);
  H5Sclose(memory);
  H5Sclose(selection);
  H5Dclose(dset);
  return wrong;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: hdf5_datasets FILE\n");
    MPI_Finalize();
    return 2;
  }
  hid_t fapl = file_access();
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, fcpl, fapl);
  CHECK(file);
  for (int d = 0; d < kDatasets; ++d) write_dataset(file, d);
  CHECK(H5Fclose(file));

  file = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
  CHECK(file);
  uint64_t hash = 1469598103934665603ull;
  long wrong = 0;
  for (int d = 0; d < kDatasets; ++d) wrong += read_dataset(file, d, &hash);
  CHECK(H5Fclose(file));
  H5Pclose(fcpl);
  H5Pclose(fapl);

  long all_wrong = 0;
  MPI_Reduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  uint64_t *hashes = rank == 0 ? malloc(sizeof(uint64_t) * ranks) : NULL;
  MPI_Gather(&hash, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("hdf5_datasets: %d ranks, %d datasets, %ld wrong values, checksums", ranks, kDatasets,
           all_wrong);
    for (int r = 0; r < ranks; ++r) printf(" %016llx", (unsigned long long)hashes[r]);
    printf("\n");
    free(hashes);
  }
  MPI_Finalize();
  return all_wrong != 0;
}
