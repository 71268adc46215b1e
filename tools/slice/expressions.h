// What an expression of the program names, for the slicer's analyses: the variable an
// lvalue belongs to, the pointer an argument reaches through, the field it names, the call's
// callee, and where an operand is used.
#pragma once

#include <map>
#include <set>
#include <string>

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ParentMap.h"

namespace stagio {
namespace slice {

using VarSet = std::set<const clang::VarDecl*>;

// The variable an expression names (x, through parentheses and implicit casts), or null.
const clang::VarDecl* VarOf(const clang::Expr* expr);
// The variable a written lvalue belongs to (a[i], s.f, s.a[i]), or null for writes through a
// pointer (*p, p->f, p[i] with p a pointer).
const clang::VarDecl* BaseVar(const clang::Expr* lvalue);
// The pointer variable an argument points through: p for p, p + k, *p, &p[k], &p->f.
const clang::VarDecl* PointerBase(const clang::Expr* arg);
// The variable a call may write through its argument `arg`: x for &x (or &x.f, &x[i]), an
// array passed whole.
void MayWrite(const clang::Expr* arg, VarSet* written);
// Calls that write only what their own pointer arguments point to, and keep no pointer for
// later: MPI's and the C library's common ones.
bool WritesOnlyItsArguments(const std::string& name);
// A field by name, record and field ("bench_run::skip_io"): the same struct seen from two
// translation units has two declarations.
std::string FieldName(const clang::FieldDecl* field);
// Notes the pointer parameter an lvalue or argument reaches through, if any, with its field
// ("" for the whole object).
void NoteParameterWrite(const clang::Expr* expr,
                        std::map<unsigned, std::set<std::string>>* parameters);
// The called function's name, or "" for a call through a pointer.
std::string CalleeName(const clang::CallExpr* call);
// The expression an operand is used in, past parentheses and casts; *operand is the operand
// as that expression holds it.
const clang::Stmt* UseOf(const clang::Stmt* expr, const clang::ParentMap& parents,
                         const clang::Stmt** operand);
// The argument index `operand` is of `call`, or -1.
int ArgumentIndex(const clang::CallExpr* call, const clang::Stmt* operand);

}  // namespace slice
}  // namespace stagio
