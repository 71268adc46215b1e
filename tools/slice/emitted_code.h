// What the helper's code does, checked before a line of it is written (issue's "safety
// first"): every write lands in the helper's own memory, every call is one the helper may
// make, and each MPI-IO call becomes its prefetch counterpart.
//
// The helper's own memory is its local variables (main's values are copied in when it
// starts) and what its functions' pointer parameters point to: every call of a cloned or
// called input function must pass, for each pointer parameter that is not const, the address
// of the caller's own memory (&local, a local array, or such a parameter of its own), so by
// induction no function of the helper is handed the main thread's memory to write.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "program_slice.h"

namespace stagio {
namespace slice {

class EmittedCode {
 public:
  // `root`: the code is main's region (main's parameters and locals are copies there, and
  // pointers among them point to the main thread's memory).
  // `function`: the function the code belongs to (its pointer parameters that it never
  // assigns point to the helper's memory, by induction over its callers).
  EmittedCode(const ProgramSlice& program, const clang::ASTContext& context, bool root,
              const clang::FunctionDecl* function);

  // Checks one statement or expression whose whole text the helper holds.
  void Add(const clang::Stmt* stmt);

  std::set<const clang::VarDecl*> referenced;   // variables the code reads or writes
  std::vector<const clang::CallExpr*> prefetches;  // MPI-IO calls, to become stagio_prefetch_*
  std::vector<const clang::CallExpr*> clone_calls;  // calls of functions the helper clones
  std::set<const clang::FunctionDecl*> clones;
  std::vector<std::string> problems;  // why the helper cannot run this code; empty: it can

  // Arguments the helper does not pass on (a buffer, a status, an unneeded parameter).
  std::set<const clang::Stmt*> skipped;

 private:
  friend class EmittedVisitor;
  void Call(const clang::CallExpr* call);
  void Write(const clang::Expr* lvalue, const std::string& what);
  bool OwnLvalue(const clang::Expr* lvalue, std::string* why) const;
  bool OwnPointer(const clang::Expr* pointer) const;
  void CheckPointerArguments(const clang::CallExpr* call, const clang::FunctionDecl* callee,
                             const std::set<unsigned>& skip);
  std::string Where(const clang::Stmt* stmt) const;

  const ProgramSlice& program_;
  const clang::ASTContext& context_;
  bool root_;
  std::set<const clang::ParmVarDecl*> assigned_parameters_;
};

// Whether an input function the helper calls as it is (it makes no MPI-IO call) writes only
// its locals and through its pointer parameters, and calls only such functions: the
// functions of the C library and MPI's local queries the helper may call, or input functions
// that pass this check too. `why` says what fails.
bool CallableByHelper(const ProgramSlice& program, const clang::FunctionDecl* function,
                      std::string* why);

}  // namespace slice
}  // namespace stagio
