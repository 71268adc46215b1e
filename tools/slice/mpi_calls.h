// The MPI-IO calls stagio-slice knows: the criteria of the slice (seed 001, Fig. 4) and what
// each becomes in the helper (seed 001, section III-D).
//
// One row per call: its name, what it does to a file, the stagio_prefetch_* call the helper
// makes instead (empty: none), and which of its arguments the slice needs. The buffer and the
// status are never needed: the helper moves no data. Calls not in the table that start with
// MPI_File_ are still MPI-IO (a query, an info call): the slice treats them as opaque.
#pragma once

#include <string>
#include <vector>

namespace stagio {
namespace slice {

enum class CallKind {
  kOpen,     // the helper shares the main thread's handle, or opens its own clone
  kClose,
  kSync,     // sync, set_size, preallocate: the helper waits for the main thread
  kView,     // set_view, seek: positioning, converted
  kRead,
  kWrite,
  kOther,    // queries and the rest: the helper cannot make them
};

struct MpiCall {
  std::string name;
  CallKind kind;
  std::string prefetch;            // the stagio_prefetch_* counterpart, or ""
  std::vector<unsigned> needed;    // argument indices the slice follows
};

// The row for `name`, or null when `name` is not an MPI-IO call (MPI_File_*).
const MpiCall* FindMpiIoCall(const std::string& name);
// True for MPI calls that communicate (everything MPI_ but MPI-IO and a few local queries):
// a value that comes from one ends the slice.
bool IsCommunication(const std::string& name);
const char* KindName(CallKind kind);

}  // namespace slice
}  // namespace stagio
