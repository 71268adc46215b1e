// How stagio hands results back the MPI way: statuses, completed requests, and errors raised
// through the file's error handler.
#pragma once

#include <mpi.h>

#include "common/status.h"

namespace stagio {

// Fills `status` (unless MPI_STATUS_IGNORE) so that MPI_Get_count/MPI_Get_elements report
// `bytes` bytes, as ROMIO does.
void SetStatusBytes(MPI_Status* status, MPI_Count bytes);

// Returns in *request a generalized request that is already complete: MPI_Wait/MPI_Test on it
// return `error` and a status of `bytes` bytes. stagio serves a nonblocking access at once
// from the cache and write-back does the slow part, so there is nothing left to wait for.
int StartCompletedRequest(int error, MPI_Count bytes, MPI_Request* request);

// Calls the file's error handler with `code` (as MPI-IO does for every failing call) and
// returns `code`. MPI_SUCCESS passes through untouched.
int RaiseFileError(MPI_File handle, int code);

// Logs `status` (it carries the detail an MPI error class cannot) and returns `code`.
int ReportFailure(const Status& status, int code);

}  // namespace stagio
