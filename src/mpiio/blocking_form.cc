#include "mpiio/blocking_form.h"

#include "mpiio/mpi_results.h"

namespace stagio::engine {

namespace {

// MPI-3.1 libraries (Open MPI 4.1) have only the int forms, and there a nonblocking call came
// with an int count. MPI-4 libraries have the _c forms, which take any count.
#if MPI_VERSION >= 4
#define STAGIO_BLOCKING(NAME) PMPI_File_##NAME##_c
using CountType = MPI_Count;
#else
#define STAGIO_BLOCKING(NAME) PMPI_File_##NAME
using CountType = int;
#endif

}  // namespace

MPI_Count StatusBytes(const MPI_Status& status) {
#if MPI_VERSION >= 4
  MPI_Count bytes = 0;
  PMPI_Get_count_c(&status, MPI_BYTE, &bytes);
#else
  int bytes = 0;
  PMPI_Get_count(&status, MPI_BYTE, &bytes);
#endif
  return bytes == MPI_UNDEFINED ? 0 : bytes;
}

int CallBlocking(const AccessCall& call, MPI_Status* status) {
  const MPI_File fh = call.file;
  void* buf = call.buffer;
  const auto n = static_cast<CountType>(call.count);
  const MPI_Datatype t = call.datatype;
  const bool write = call.direction == Direction::kWrite;
  switch (call.positioning) {
    case Positioning::kExplicit:
      if (call.collective) {
        return write ? STAGIO_BLOCKING(write_at_all)(fh, call.offset, buf, n, t, status)
                     : STAGIO_BLOCKING(read_at_all)(fh, call.offset, buf, n, t, status);
      }
      return write ? STAGIO_BLOCKING(write_at)(fh, call.offset, buf, n, t, status)
                   : STAGIO_BLOCKING(read_at)(fh, call.offset, buf, n, t, status);
    case Positioning::kIndividual:
      if (call.collective) {
        return write ? STAGIO_BLOCKING(write_all)(fh, buf, n, t, status)
                     : STAGIO_BLOCKING(read_all)(fh, buf, n, t, status);
      }
      return write ? STAGIO_BLOCKING(write)(fh, buf, n, t, status)
                   : STAGIO_BLOCKING(read)(fh, buf, n, t, status);
    case Positioning::kShared:
      return write ? STAGIO_BLOCKING(write_shared)(fh, buf, n, t, status)
                   : STAGIO_BLOCKING(read_shared)(fh, buf, n, t, status);
    case Positioning::kOrdered:
      return write ? STAGIO_BLOCKING(write_ordered)(fh, buf, n, t, status)
                   : STAGIO_BLOCKING(read_ordered)(fh, buf, n, t, status);
  }
  return MPI_ERR_INTERN;
}

int CallInBlockingForm(const AccessCall& call, MPI_Count* split_bytes) {
  MPI_Status status;
  const int rc = CallBlocking(call, &status);
  if (rc != MPI_SUCCESS) return rc;
  if (call.completion == Completion::kSplitBegin) {
    *split_bytes = StatusBytes(status);
    return MPI_SUCCESS;
  }
  return StartCompletedRequest(MPI_SUCCESS, StatusBytes(status), call.request);
}

#undef STAGIO_BLOCKING

}  // namespace stagio::engine
