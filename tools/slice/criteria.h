// The criteria of a program's slice: every MPI-IO call in the input's own source (seed 001,
// Fig. 4), where it is and what it would become, and whether the program initializes MPI
// itself (the helper thread needs MPI_THREAD_MULTIPLE).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clang/Frontend/ASTUnit.h"
#include "mpi_calls.h"

namespace stagio {
namespace slice {

struct Criterion {
  std::string call;      // as written: MPI_File_read_at_c
  CallKind kind;
  std::string prefetch;  // the helper's call, or "" (none: the call is opaque to the helper)
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string function;  // the function the call is in
};

struct MpiInit {
  std::string call;  // MPI_Init or MPI_Init_thread
  std::string file;
  unsigned line = 0;
};

struct ProgramCalls {
  std::vector<Criterion> criteria;
  std::vector<MpiInit> inits;
};

// The calls in the main files of `units` (not in headers they include), in source order.
ProgramCalls FindCalls(const std::vector<std::unique_ptr<clang::ASTUnit>>& units);

}  // namespace slice
}  // namespace stagio
