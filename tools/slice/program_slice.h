// The slices of all the input's functions, sliced across the functions whose bodies the input
// has (function_slice.h does one function), and where each function is.
#pragma once

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "clang/Frontend/ASTUnit.h"
#include "function_slice.h"

namespace stagio {
namespace slice {

struct ProgramSlice {
  // The input's function definitions (in their main files), by name, and the unit of each.
  std::map<std::string, const clang::FunctionDecl*> functions;
  std::map<const clang::FunctionDecl*, clang::ASTUnit*> unit_of;
  // Names two units both define (static functions): calls by name would be ambiguous.
  std::set<std::string> defined_twice;
  // The functions that make MPI-IO calls, themselves or through others, in source order.
  std::vector<FunctionSlice> slices;
  KnownFunctions known;

  const FunctionSlice* SliceOf(const clang::FunctionDecl* function) const;
};

// A function's slice needs some of its parameters, so each call of it is a criterion of its
// caller's slice for those arguments; callers are sliced again until no function needs more
// (the needs only grow, so this ends). Functions are known by name across the units.
ProgramSlice SliceProgram(const std::vector<std::unique_ptr<clang::ASTUnit>>& units);

}  // namespace slice
}  // namespace stagio
