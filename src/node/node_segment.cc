#include "node/node_segment.h"

#include <algorithm>
#include <string>

namespace stagio {

namespace {

// The ranks of `comm` on this rank's node, or on its pretend node.
MPI_Comm SplitByNode(MPI_Comm comm, int pretend_node_size) {
  MPI_Comm shared = MPI_COMM_NULL;
  PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  if (pretend_node_size <= 0) return shared;
  int rank = 0;
  PMPI_Comm_rank(shared, &rank);
  MPI_Comm pretend = MPI_COMM_NULL;
  PMPI_Comm_split(shared, rank / pretend_node_size, rank, &pretend);
  PMPI_Comm_free(&shared);
  return pretend;
}

std::string MpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  PMPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

}  // namespace

std::unique_ptr<NodeSegment> NodeSegment::Create(MPI_Comm comm, int pretend_node_size,
                                                 uint64_t block_size, uint64_t bytes_per_rank,
                                                 Status* status) {
  MPI_Comm node_comm = SplitByNode(comm, pretend_node_size);
  // A failed allocation must come back as an error, not end the job.
  PMPI_Comm_set_errhandler(node_comm, MPI_ERRORS_RETURN);
  int node_rank = 0, node_size = 1;
  PMPI_Comm_rank(node_comm, &node_rank);
  PMPI_Comm_size(node_comm, &node_size);
  NodeBlockTable::Layout layout;
  layout.frame_size = block_size;
  const uint64_t frames_per_rank = std::max<uint64_t>(1, bytes_per_rank / block_size);
  layout.frames = static_cast<uint32_t>(
      std::min<uint64_t>(frames_per_rank * static_cast<uint64_t>(node_size), 1u << 30));
  const MPI_Aint bytes =
      node_rank == 0 ? static_cast<MPI_Aint>(NodeBlockTable::BytesFor(layout)) : 0;
  void* mine = nullptr;
  MPI_Win window = MPI_WIN_NULL;
  int rc = PMPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node_comm, &mine, &window);
  void* memory = nullptr;
  if (rc == MPI_SUCCESS) {
    MPI_Aint size = 0;
    int displacement_unit = 0;
    rc = PMPI_Win_shared_query(window, 0, &size, &displacement_unit, &memory);
    if (rc == MPI_SUCCESS && node_rank == 0) NodeBlockTable::Create(memory, layout);
  }
  // Everyone's answer, and the table laid out before anyone uses it.
  int failed = rc != MPI_SUCCESS ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, node_comm);
  if (failed) {
    *status = Status::IOError("cannot share the node cache's memory among the node's ranks" +
                              (rc != MPI_SUCCESS ? ": " + MpiErrorText(rc) : std::string()));
    if (window != MPI_WIN_NULL) PMPI_Win_free(&window);
    PMPI_Comm_free(&node_comm);
    return nullptr;
  }
  *status = Status::OK();
  return std::unique_ptr<NodeSegment>(new NodeSegment(node_comm, window, memory));
}

NodeSegment::NodeSegment(MPI_Comm node_comm, MPI_Win window, void* memory)
    : node_comm_(node_comm), window_(window), table_(memory) {
  PMPI_Comm_rank(node_comm_, &node_rank_);
  PMPI_Comm_size(node_comm_, &node_size_);
}

NodeSegment::~NodeSegment() {
  PMPI_Win_free(&window_);
  PMPI_Comm_free(&node_comm_);
}

}  // namespace stagio
