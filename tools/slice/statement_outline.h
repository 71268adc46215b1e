// Which of a function's statements the helper runs, and their text.
//
// The slice (function_slice.h) names CFG nodes: often subexpressions of a statement, or a loop
// whose condition is in the slice. The outline lifts each to the statement it belongs to (a
// child of a block, or a loop's or branch's body), keeps the blocks, loops and branches that
// hold one, and prints them from the source as the program has them, with the calls the
// helper makes differently already rewritten (in `scratch`).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/Stmt.h"
#include "clang/Rewrite/Core/Rewriter.h"

namespace stagio {
namespace slice {

class StatementOutline {
 public:
  StatementOutline(const clang::FunctionDecl& function,
                   const std::set<const clang::Stmt*>& slice_statements);

  // The statements kept whole: leaves (an expression statement, a declaration, a jump) and
  // loops and branches whose condition is in the slice.
  bool Kept(const clang::Stmt* stmt) const { return kept_.count(stmt) > 0; }
  // Kept, or holding a kept statement.
  bool Relevant(const clang::Stmt* stmt) const { return relevant_.count(stmt) > 0; }
  const clang::Stmt* Parent(const clang::Stmt* stmt) const { return parents_.getParent(stmt); }
  // Whether the slice holds this very statement or expression (not only some of its parts).
  bool InSlice(const clang::Stmt* stmt) const { return slice_.count(stmt) > 0; }
  // The largest parts of `stmt` the slice holds: what runs of a statement kept for a part of
  // it (the read inside check(MPI_File_read(...)), not the check).
  void SliceParts(const clang::Stmt* stmt, std::vector<const clang::Stmt*>* parts) const;

 private:
  const clang::Stmt* StatementOf(const clang::Stmt* stmt) const;

  clang::ParentMap parents_;
  std::set<const clang::Stmt*> slice_;
  std::set<const clang::Stmt*> kept_;
  std::set<const clang::Stmt*> relevant_;
};

// Walks and prints the outline of a statement. With a null `scratch` it prints nothing and
// only reports, through `emitted`, each expression or statement whose whole text the helper
// will hold (what the checks and the rewrite must look at).
class OutlinePrinter {
 public:
  OutlinePrinter(const StatementOutline& outline, const clang::ASTContext& context,
                 clang::Rewriter* scratch, bool root,
                 std::function<void(const clang::Stmt*)> emitted,
                 const std::set<const clang::VarDecl*>& referenced)
      : outline_(outline), context_(context), scratch_(scratch), root_(root),
        emitted_(std::move(emitted)), referenced_(referenced) {}

  // A statement of a block: printed when relevant; otherwise only its labels, and the
  // declarations of variables the printed code refers to (without their initializer).
  std::string Child(const clang::Stmt* stmt);
  std::string Statement(const clang::Stmt* stmt);

 private:
  std::string Body(const clang::Stmt* stmt);
  std::string Leaf(const clang::Stmt* stmt);
  std::string Between(clang::SourceLocation begin, clang::SourceLocation end);
  std::string Text(const clang::Stmt* stmt);
  void Emitted(const clang::Stmt* stmt);

  const StatementOutline& outline_;
  const clang::ASTContext& context_;
  clang::Rewriter* scratch_;
  bool root_;
  std::function<void(const clang::Stmt*)> emitted_;
  const std::set<const clang::VarDecl*>& referenced_;
};

// `type name` as a declaration (arrays and function pointers included), top-level qualifiers
// dropped.
std::string Declaration(clang::QualType type, const std::string& name,
                        const clang::ASTContext& context);

}  // namespace slice
}  // namespace stagio
