#include "mpiio/mpi_results.h"

#include "common/log.h"

namespace stagio {

namespace {

struct CompletedRequest {
  int error;
  MPI_Count bytes;
};

int QueryCompleted(void* extra_state, MPI_Status* status) {
  auto* request = static_cast<CompletedRequest*>(extra_state);
  SetStatusBytes(status, request->bytes);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = request->error;
  return request->error;
}

int FreeCompleted(void* extra_state) {
  delete static_cast<CompletedRequest*>(extra_state);
  return MPI_SUCCESS;
}

int CancelCompleted(void* /*extra_state*/, int /*complete*/) {
  return MPI_SUCCESS;  // already complete: cancelling has no effect, as MPI specifies
}

}  // namespace

void SetStatusBytes(MPI_Status* status, MPI_Count bytes) {
  if (status == MPI_STATUS_IGNORE) return;
  PMPI_Status_set_elements_x(status, MPI_BYTE, bytes);
}

int StartCompletedRequest(int error, MPI_Count bytes, MPI_Request* request) {
  auto* state = new CompletedRequest{error, bytes};
  int rc = PMPI_Grequest_start(QueryCompleted, FreeCompleted, CancelCompleted, state, request);
  if (rc != MPI_SUCCESS) {
    delete state;
    return rc;
  }
  return PMPI_Grequest_complete(*request);
}

int RaiseFileError(MPI_File handle, int code) {
  if (code != MPI_SUCCESS) PMPI_File_call_errhandler(handle, code);
  return code;
}

int ReportFailure(const Status& status, int code) {
  LogError(status.ToString());
  return code;
}

}  // namespace stagio
