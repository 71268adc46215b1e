// The backward slice of one function from its MPI-IO calls (seed 001, Fig. 4), within the
// function: data dependences by reaching definitions over clang's CFG, and control
// dependences by post-dominators (clang::ControlDependencyCalculator).
//
// Locations are the function's variables. Conservatively: a write through a pointer, an
// array element or a field writes its base variable without killing earlier definitions; a
// variable whose address escapes may be written by any call or write through a pointer after
// that; a call's arguments are all its uses. A definition that comes from an MPI call that
// communicates is a cut: the slice does not follow it, and the report says where.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "clang/AST/Decl.h"
#include "clang/AST/ASTContext.h"

namespace stagio {
namespace slice {

struct SliceLine {
  unsigned line = 0;
  std::string why;  // "criterion MPI_File_read_at", "data: offset", "control: line 12"
};

struct SliceCut {
  unsigned line = 0;
  std::string call;      // the communicating call
  std::string variable;  // the value the slice needed from it
};

struct FunctionSlice {
  std::string function;
  std::vector<SliceLine> lines;  // sorted by line, one entry per line (its first reason)
  std::vector<SliceCut> cuts;
  std::vector<unsigned> needed_parameters;  // whose values the slice reads: its callers supply them
};

// What the slices of the input's functions need from their callers: for each function (by
// name) that makes MPI-IO calls itself or through its callees, the indices of the parameters
// its slice reads. A call to such a function is a criterion too, needing those arguments.
using CalleeNeeds = std::map<std::string, std::vector<unsigned>>;

// What the slicer knows of the input's functions.
struct KnownFunctions {
  CalleeNeeds needs;
  // Functions of the input that write only through their own pointer arguments (no global,
  // and calls only of such functions): a call of one may write what its arguments point to,
  // not every variable whose address escaped.
  std::set<std::string> write_only_arguments;
};

// The input's functions that write only through their pointer arguments (see above).
std::set<std::string> FunctionsWritingOnlyArguments(
    const std::vector<const clang::FunctionDecl*>& functions);

// False when the function makes no MPI-IO call, directly or through a function of
// `known.needs`, or clang cannot build its CFG.
bool SliceFunction(const clang::FunctionDecl& function, clang::ASTContext& context,
                   const KnownFunctions& known, FunctionSlice* slice);

}  // namespace slice
}  // namespace stagio
