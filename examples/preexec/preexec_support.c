/* Slice counterparts of bench_common's calls; see preexec_support.h. */
#include "preexec_support.h"

void slice_read_at(const bench_run *run, MPI_File file, int64_t offset, int64_t length) {
  if (run->collective)
    stagio_prefetch_read_at_all(file, offset, length, MPI_BYTE);
  else
    stagio_prefetch_read_at(file, offset, length, MPI_BYTE);
}

void slice_write_at(const bench_run *run, MPI_File file, int64_t offset, int64_t length) {
  if (run->collective)
    stagio_prefetch_write_at_all(file, offset, length, MPI_BYTE);
  else
    stagio_prefetch_write_at(file, offset, length, MPI_BYTE);
}

void slice_set_view(const bench_run *run, MPI_File file, int64_t displacement,
                    MPI_Datatype filetype) {
  stagio_prefetch_set_view(file, displacement, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
}

void slice_read_view(const bench_run *run, MPI_File file, int64_t length) {
  if (run->collective)
    stagio_prefetch_read_all(file, length, MPI_BYTE);
  else
    stagio_prefetch_read(file, length, MPI_BYTE);
}

stagio_preexec *example_preexec_start(const bench_run *run, void (*slice)(void *), void *arg,
                                      const MPI_File *files, int nfiles) {
  if (run->skip_io || run->skip_reads) return NULL;
  return stagio_preexec_start(slice, arg, files, nfiles);
}

void example_preexec_join(stagio_preexec *helper) {
  if (helper) stagio_preexec_join(helper);
}
