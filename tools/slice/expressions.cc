#include "expressions.h"

namespace stagio {
namespace slice {

using clang::dyn_cast;

const clang::VarDecl* VarOf(const clang::Expr* expr) {
  if (auto* ref = dyn_cast<clang::DeclRefExpr>(expr->IgnoreParenImpCasts())) {
    return dyn_cast<clang::VarDecl>(ref->getDecl());
  }
  return nullptr;
}

// The variable a written lvalue belongs to (a[i], s.f, s.a[i]), or null for writes through a
// pointer (*p, p->f, p[i] with p a pointer).
const clang::VarDecl* BaseVar(const clang::Expr* lvalue) {
  const clang::Expr* at = lvalue->IgnoreParenImpCasts();
  for (;;) {
    if (auto* subscript = dyn_cast<clang::ArraySubscriptExpr>(at)) {
      if (subscript->getBase()->IgnoreParenImpCasts()->getType()->isPointerType() &&
          !subscript->getBase()->IgnoreParenCasts()->getType()->isArrayType()) {
        return nullptr;
      }
      at = subscript->getBase()->IgnoreParenCasts();
    } else if (auto* member = dyn_cast<clang::MemberExpr>(at)) {
      if (member->isArrow()) return nullptr;
      at = member->getBase()->IgnoreParenImpCasts();
    } else {
      break;
    }
  }
  return VarOf(at);
}

// Calls that write only what their own pointer arguments point to, and keep no pointer for
// later: MPI's (its nonblocking calls write their buffers later, which the helper never reads)
// and the C library's common ones. Any other call may write every variable whose address
// escaped.
bool WritesOnlyItsArguments(const std::string& name) {
  if (name.rfind("MPI_", 0) == 0 || name.rfind("PMPI_", 0) == 0) return true;
  static const char* const library[] = {"malloc", "calloc", "realloc", "free", "memcpy",
                                        "memmove", "memset", "strlen", "strcmp", "strncmp",
                                        "printf", "fprintf", "snprintf", "puts", "abs",
                                        "labs", "sqrt", "exit", "abort", "nanosleep", "usleep",
                                        "sleep", "clock_gettime", "gettimeofday", "time",
                                        "__errno_location", "getrusage", "clock"};
  for (const char* known : library) {
    if (name == known) return true;
  }
  return false;
}

// The variable a call may write through its argument `arg`: x for &x (or &x.f, &x[i]), an
// array passed whole.
void MayWrite(const clang::Expr* arg, VarSet* written) {
  const clang::Expr* bare = arg->IgnoreParenImpCasts();
  if (auto* address = dyn_cast<clang::UnaryOperator>(bare);
      address != nullptr && address->getOpcode() == clang::UO_AddrOf) {
    if (const clang::VarDecl* var = BaseVar(address->getSubExpr())) written->insert(var);
  } else if (const clang::VarDecl* var = VarOf(bare);
             var != nullptr && var->getType()->isArrayType()) {
    written->insert(var);
  }
}

// The pointer variable an argument points through: p for p, p + k, &p[k], &p->f.
const clang::VarDecl* PointerBase(const clang::Expr* arg) {
  const clang::Expr* at = arg->IgnoreParenCasts();
  for (;;) {
    if (auto* address = dyn_cast<clang::UnaryOperator>(at);
        address != nullptr && address->getOpcode() == clang::UO_AddrOf) {
      at = address->getSubExpr()->IgnoreParenCasts();
    } else if (auto* deref = dyn_cast<clang::UnaryOperator>(at);
               deref != nullptr && deref->getOpcode() == clang::UO_Deref) {
      at = deref->getSubExpr()->IgnoreParenCasts();
    } else if (auto* subscript = dyn_cast<clang::ArraySubscriptExpr>(at)) {
      at = subscript->getBase()->IgnoreParenCasts();
    } else if (auto* member = dyn_cast<clang::MemberExpr>(at)) {
      at = member->getBase()->IgnoreParenCasts();
    } else if (auto* sum = dyn_cast<clang::BinaryOperator>(at);
               sum != nullptr && sum->isAdditiveOp()) {
      at = (sum->getLHS()->getType()->isPointerType() ? sum->getLHS() : sum->getRHS())
               ->IgnoreParenCasts();
    } else {
      break;
    }
  }
  const clang::VarDecl* var = VarOf(at);
  return var != nullptr && var->getType()->isPointerType() ? var : nullptr;
}

// A field by name, record and field ("bench_run::skip_io"): the same struct seen from two
// translation units has two declarations.
std::string FieldName(const clang::FieldDecl* field) {
  return field->getParent()->getNameAsString() + "::" + field->getNameAsString();
}

void NoteParameterWrite(const clang::Expr* expr,
                        std::map<unsigned, std::set<std::string>>* parameters) {
  auto* parameter = llvm::dyn_cast_or_null<clang::ParmVarDecl>(PointerBase(expr));
  if (parameter == nullptr) return;
  const clang::Expr* at = expr->IgnoreParenCasts();
  if (auto* address = dyn_cast<clang::UnaryOperator>(at);
      address != nullptr && address->getOpcode() == clang::UO_AddrOf) {
    at = address->getSubExpr()->IgnoreParenCasts();
  }
  std::string field;
  if (auto* member = dyn_cast<clang::MemberExpr>(at)) {
    if (auto* decl = dyn_cast<clang::FieldDecl>(member->getMemberDecl())) field = FieldName(decl);
  }
  (*parameters)[parameter->getFunctionScopeIndex()].insert(field);
}

std::string CalleeName(const clang::CallExpr* call) {
  const clang::FunctionDecl* callee = call->getDirectCallee();
  return callee != nullptr ? callee->getNameAsString() : std::string();
}

// The expression an operand is used as, past parentheses and casts.
const clang::Stmt* UseOf(const clang::Stmt* expr, const clang::ParentMap& parents,
                         const clang::Stmt** operand) {
  const clang::Stmt* at = expr;
  const clang::Stmt* parent = parents.getParent(at);
  while (parent != nullptr &&
         (clang::isa<clang::ParenExpr>(parent) || clang::isa<clang::CastExpr>(parent))) {
    at = parent;
    parent = parents.getParent(at);
  }
  *operand = at;
  return parent;
}

// The argument index `operand` is of `call`, or -1.
int ArgumentIndex(const clang::CallExpr* call, const clang::Stmt* operand) {
  for (unsigned index = 0; index < call->getNumArgs(); ++index) {
    if (call->getArg(index) == operand) return static_cast<int>(index);
  }
  return -1;
}

}  // namespace slice
}  // namespace stagio
