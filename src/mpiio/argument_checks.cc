#include "mpiio/argument_checks.h"

#include <limits>

namespace stagio {
namespace {

constexpr uint64_t kLargestOffset = static_cast<uint64_t>(std::numeric_limits<MPI_Offset>::max());

}  // namespace

DatatypeChecker::DatatypeChecker() {
  if (PMPI_Comm_dup(MPI_COMM_SELF, &quiet_) != MPI_SUCCESS) {
    quiet_ = MPI_COMM_NULL;
    return;
  }
  PMPI_Comm_set_errhandler(quiet_, MPI_ERRORS_RETURN);
}

DatatypeChecker::~DatatypeChecker() {
  if (quiet_ != MPI_COMM_NULL) PMPI_Comm_free(&quiet_);
}

int DatatypeChecker::Check(MPI_Datatype datatype) const {
  if (datatype == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  // Without its communicator (MPI could not duplicate MPI_COMM_SELF) the checker cannot ask;
  // refusing every datatype would stop all I/O, so it trusts the handle as stagio once did.
  if (quiet_ == MPI_COMM_NULL) return MPI_SUCCESS;
  char in = 0;
  char out = 0;
  int position = 0;
  return PMPI_Pack(&in, 0, datatype, &out, 0, &position, quiet_) == MPI_SUCCESS ? MPI_SUCCESS
                                                                                : MPI_ERR_TYPE;
}

int CheckTransferSize(MPI_Count count, MPI_Datatype datatype, uint64_t* bytes) {
  MPI_Count type_size = 0;
  if (PMPI_Type_size_x(datatype, &type_size) != MPI_SUCCESS || type_size < 0) {
    return MPI_ERR_TYPE;
  }
  uint64_t product = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), static_cast<uint64_t>(type_size),
                             &product) ||
      product > kLargestOffset) {
    return MPI_ERR_ARG;
  }
  *bytes = product;
  return MPI_SUCCESS;
}

bool StreamEnd(MPI_Offset position, uint64_t etype_size, uint64_t bytes, uint64_t* end) {
  uint64_t begin = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(position), etype_size, &begin) ||
      begin > kLargestOffset || bytes > kLargestOffset - begin) {
    return false;
  }
  *end = begin + bytes;
  return true;
}

}  // namespace stagio
