// The rewrite (seed 001, section III-D): main's I/O, from its first data access to its last,
// also runs on a helper thread as its slice, with every MPI-IO call turned into its
// stagio_prefetch_* counterpart and every function on the way cloned the same way.
//
// The region is a run of main's top-level statements. It starts after the last statement
// whose results the slice needs but the helper cannot have (a value from communication, a
// query, or the data a read returns): those run before the helper starts, and their values
// reach it as copies. main's variables the helper uses are copied into a struct when it
// starts, so the helper never writes the main thread's memory (emitted_code.h checks the rest).
// The helper is started before the region, with the files open then, and joined after it
// (and before every return inside it). MPI_Init asks for MPI_THREAD_MULTIPLE.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clang/Frontend/ASTUnit.h"
#include "program_slice.h"

namespace stagio {
namespace slice {

struct HelperBuild {
  bool built = false;
  std::string reason;  // why the program is left unchanged
  std::map<const clang::ASTUnit*, std::string> sources;  // the new text of each changed unit
  nlohmann::json report;  // the region, what is copied, the files, the clones, MPI_Init
};

HelperBuild BuildHelper(const ProgramSlice& program,
                        const std::vector<std::unique_ptr<clang::ASTUnit>>& units);

}  // namespace slice
}  // namespace stagio
