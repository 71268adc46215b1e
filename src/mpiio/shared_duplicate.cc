#include "mpiio/shared_duplicate.h"

#include "mpiio/polite_wait.h"

namespace stagio {

namespace {

// Frees the duplicate when the application frees the communicator it hangs on.
int FreeDuplicate(MPI_Comm /*comm*/, int /*keyval*/, void* attribute, void* /*extra*/) {
  MPI_Comm* duplicate = static_cast<MPI_Comm*>(attribute);
  if (*duplicate != MPI_COMM_NULL) PMPI_Comm_free(duplicate);
  delete duplicate;
  return MPI_SUCCESS;
}

int DuplicateKeyval() {
  // Created once, on the first open (the application thread); never freed, as MPI's own
  // keyvals are not.
  static const int keyval = [] {
    int created = MPI_KEYVAL_INVALID;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, FreeDuplicate, &created, nullptr) !=
        MPI_SUCCESS) {
      return static_cast<int>(MPI_KEYVAL_INVALID);
    }
    return created;
  }();
  return keyval;
}

MPI_Comm Duplicate(MPI_Comm comm) {
  MPI_Comm duplicate = MPI_COMM_NULL;
  const int rc = CollectiveWithoutSpinning(
      [&](MPI_Request* request) { return PMPI_Comm_idup(comm, &duplicate, request); });
  return rc == MPI_SUCCESS ? duplicate : MPI_COMM_NULL;
}

}  // namespace

MPI_Comm SharedDuplicate(MPI_Comm comm) {
  const int keyval = DuplicateKeyval();
  if (keyval == MPI_KEYVAL_INVALID) return MPI_COMM_NULL;
  void* attribute = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval, &attribute, &found);
  if (found) return *static_cast<MPI_Comm*>(attribute);
  // Every rank gets here for the same open (none has the attribute yet), so all duplicate.
  MPI_Comm* duplicate = new MPI_Comm(Duplicate(comm));
  if (*duplicate == MPI_COMM_NULL || PMPI_Comm_set_attr(comm, keyval, duplicate) != MPI_SUCCESS) {
    if (*duplicate != MPI_COMM_NULL) PMPI_Comm_free(duplicate);
    delete duplicate;
    return MPI_COMM_NULL;
  }
  return *duplicate;
}

}  // namespace stagio
