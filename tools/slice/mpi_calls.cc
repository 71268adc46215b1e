#include "mpi_calls.h"

#include <unordered_map>

namespace stagio {
namespace slice {
namespace {

// Arguments: the handle is argument 0 of every call but open (argument 4, the output handle);
// then offset, count and datatype where the call has them.
const std::vector<MpiCall>& Table() {
  static const std::vector<MpiCall> table = {
      {"MPI_File_open", CallKind::kOpen, "stagio_prefetch_open", {0, 1, 2, 3, 4}},
      {"MPI_File_close", CallKind::kClose, "stagio_prefetch_close", {0}},
      {"MPI_File_sync", CallKind::kSync, "stagio_prefetch_sync", {0}},
      {"MPI_File_set_size", CallKind::kSync, "stagio_prefetch_set_size", {0, 1}},
      {"MPI_File_preallocate", CallKind::kSync, "", {0, 1}},
      {"MPI_File_set_view", CallKind::kView, "stagio_prefetch_set_view", {0, 1, 2, 3}},
      {"MPI_File_seek", CallKind::kView, "stagio_prefetch_seek", {0, 1, 2}},
      {"MPI_File_read_at", CallKind::kRead, "stagio_prefetch_read_at", {0, 1, 3, 4}},
      {"MPI_File_read_at_all", CallKind::kRead, "stagio_prefetch_read_at_all", {0, 1, 3, 4}},
      {"MPI_File_read", CallKind::kRead, "stagio_prefetch_read", {0, 2, 3}},
      {"MPI_File_read_all", CallKind::kRead, "stagio_prefetch_read_all", {0, 2, 3}},
      {"MPI_File_iread_at", CallKind::kRead, "stagio_prefetch_read_at", {0, 1, 3, 4}},
      {"MPI_File_iread", CallKind::kRead, "stagio_prefetch_read", {0, 2, 3}},
      {"MPI_File_write_at", CallKind::kWrite, "stagio_prefetch_write_at", {0, 1, 3, 4}},
      {"MPI_File_write_at_all", CallKind::kWrite, "stagio_prefetch_write_at_all", {0, 1, 3, 4}},
      {"MPI_File_write", CallKind::kWrite, "stagio_prefetch_write", {0, 2, 3}},
      {"MPI_File_write_all", CallKind::kWrite, "stagio_prefetch_write_all", {0, 2, 3}},
      {"MPI_File_iwrite_at", CallKind::kWrite, "stagio_prefetch_write_at", {0, 1, 3, 4}},
      {"MPI_File_iwrite", CallKind::kWrite, "stagio_prefetch_write", {0, 2, 3}},
  };
  return table;
}

// MPI calls that neither communicate nor touch a file: their results may be in a slice.
bool IsLocalQuery(const std::string& name) {
  static const char* const local[] = {"MPI_Comm_rank", "MPI_Comm_size", "MPI_Type_size",
                                      "MPI_Type_get_extent", "MPI_Wtime", "MPI_Get_count"};
  for (const char* query : local) {
    if (name == query) return true;
  }
  return false;
}

}  // namespace

const MpiCall* FindMpiIoCall(const std::string& name) {
  static const std::unordered_map<std::string, const MpiCall*> by_name = [] {
    std::unordered_map<std::string, const MpiCall*> map;
    for (const MpiCall& call : Table()) map[call.name] = &call;
    return map;
  }();
  // The large-count forms (MPICH's _c) take the same arguments.
  std::string base = name;
  if (base.size() > 2 && base.compare(base.size() - 2, 2, "_c") == 0) base.resize(base.size() - 2);
  auto it = by_name.find(base);
  if (it != by_name.end()) return it->second;
  if (name.rfind("MPI_File_", 0) == 0) {
    static const MpiCall other{"", CallKind::kOther, "", {0}};
    return &other;
  }
  return nullptr;
}

bool IsCommunication(const std::string& name) {
  return (name.rfind("MPI_", 0) == 0 || name.rfind("PMPI_", 0) == 0) &&
         name.rfind("MPI_File_", 0) != 0 && !IsLocalQuery(name);
}

const char* KindName(CallKind kind) {
  switch (kind) {
    case CallKind::kOpen: return "open";
    case CallKind::kClose: return "close";
    case CallKind::kSync: return "sync";
    case CallKind::kView: return "view";
    case CallKind::kRead: return "read";
    case CallKind::kWrite: return "write";
    case CallKind::kOther: return "other";
  }
  return "other";
}

}  // namespace slice
}  // namespace stagio
