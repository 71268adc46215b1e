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
#include "function_summaries.h"

namespace stagio {
namespace slice {

struct SliceLine {
  unsigned line = 0;
  std::string why;  // "criterion MPI_File_read_at", "data: offset", "control: line 12"
};

struct SliceCut {
  unsigned line = 0;
  std::string call;      // the call the helper cannot make (it communicates, or it is a query)
  std::string variable;  // the value the slice needed from it
  const clang::Stmt* statement = nullptr;
};

struct FunctionSlice {
  std::string function;
  std::vector<SliceLine> lines;  // sorted by line, one entry per line (its first reason)
  std::vector<SliceCut> cuts;
  std::vector<unsigned> needed_parameters;  // whose values the slice reads: its callers supply them
  // The parameters through which the function stores data it reads from a file: a value its
  // caller takes from there is one the helper cannot have.
  std::vector<unsigned> file_data_parameters;
  // For each input function it calls: the arguments (indices) through which the call writes
  // a value this slice reads afterwards. The callee's slice must compute those writes.
  std::map<std::string, std::set<unsigned>> callee_out_needs;
  // Its return value needs one the helper cannot have: callers cannot use it.
  bool returns_unavailable = false;
  // The input functions whose return value its statements use.
  std::set<std::string> callee_returns_needed;
  // The struct fields its statements read ("record::field").
  std::set<std::string> fields_read;
  const clang::FunctionDecl* decl = nullptr;
  // The statements of the slice as the AST holds them: CFG elements (often subexpressions of
  // a statement), loops and branches whose condition is in it, and jumps.
  std::set<const clang::Stmt*> statements;
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
  // Functions that write only through their arguments but call libraries the input does not
  // define (FunctionsWritingOnlyArgumentsAndLibraries): a call of one may write what its
  // arguments point to, and what a library may have been handed.
  std::set<std::string> library_bound;
  // For each function of `needs`, its FunctionSlice::file_data_parameters.
  std::map<std::string, std::vector<unsigned>> file_data_parameters;
  // For each function, the pointer parameters some caller's slice reads through after the
  // call: the writes through them are criteria of its slice.
  std::map<std::string, std::set<unsigned>> out_needs;
  // The fields any slice reads: a write through a parameter of a field no slice reads is no
  // caller's concern.
  std::set<std::string> fields_read;
  ParameterWrites parameter_writes;                              // FindParameterWrites
  std::map<std::string, std::set<unsigned>> stored_parameters;  // FindStoredParameters
  std::map<std::string, std::set<std::string>> fields_read_by;  // FindFieldsReadBy
  // Functions whose return value the helper cannot compute (FunctionSlice::returns_unavailable).
  std::set<std::string> returns_unavailable;
  // Functions whose return value some caller's slice uses: their returns are criteria.
  std::set<std::string> returns_needed;
};

// False when the function makes no MPI-IO call, directly or through a function of
// `known.needs`, or clang cannot build its CFG.
bool SliceFunction(const clang::FunctionDecl& function, clang::ASTContext& context,
                   const KnownFunctions& known, FunctionSlice* slice);

}  // namespace slice
}  // namespace stagio
