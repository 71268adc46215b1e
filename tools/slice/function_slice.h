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
};

// Null when the function has no MPI-IO call or clang cannot build its CFG.
bool SliceFunction(const clang::FunctionDecl& function, clang::ASTContext& context,
                   FunctionSlice* slice);

}  // namespace slice
}  // namespace stagio
