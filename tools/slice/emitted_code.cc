#include "emitted_code.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "mpi_calls.h"

namespace stagio {
namespace slice {

using clang::dyn_cast;

namespace {

// Functions with no effect but on what their pointer arguments point to (checked at each
// call like any other): C's arithmetic, memory and string calls, and MPI's local queries.
bool LibraryCallable(std::string name) {
  if (name.rfind("__builtin_", 0) == 0) name = name.substr(10);
  if (name.size() > 5 && name.compare(0, 2, "__") == 0 &&
      name.compare(name.size() - 4, 4, "_chk") == 0) {
    name = name.substr(2, name.size() - 6);  // _FORTIFY_SOURCE's __memcpy_chk
  }
  static const std::set<std::string> callable = {
      "abs", "labs", "llabs", "fabs", "sqrt", "pow", "floor", "ceil", "round", "lround",
      "llround", "fmod", "fmin", "fmax", "log", "log2", "log10", "exp", "expect",
      "memset", "memcpy", "memmove", "memcmp", "strlen", "strcmp", "strncmp", "strchr",
      "atoi", "atol", "atoll", "strtol", "strtoll", "strtoul", "strtoull", "strtod",
      "MPI_Comm_rank", "MPI_Comm_size", "MPI_Type_size", "MPI_Type_size_x",
      "MPI_Type_get_extent", "MPI_Type_get_extent_x", "MPI_Wtime", "MPI_Get_count"};
  return callable.count(name) > 0;
}

const clang::FunctionDecl* Definition(const ProgramSlice& program,
                                      const clang::FunctionDecl* callee) {
  auto it = program.functions.find(callee->getNameAsString());
  return it != program.functions.end() ? it->second : nullptr;
}

}  // namespace

// The parameters a function assigns (p = ..., p++, &p taken): no longer what its caller gave.
class ParameterAssignments : public clang::RecursiveASTVisitor<ParameterAssignments> {
 public:
  std::set<const clang::ParmVarDecl*> assigned;
  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) Note(op->getLHS());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp() || op->getOpcode() == clang::UO_AddrOf) {
      Note(op->getSubExpr());
    }
    return true;
  }

 private:
  void Note(const clang::Expr* expr) {
    if (auto* ref = dyn_cast<clang::DeclRefExpr>(expr->IgnoreParenImpCasts())) {
      if (auto* parameter = dyn_cast<clang::ParmVarDecl>(ref->getDecl())) {
        assigned.insert(parameter);
      }
    }
  }
};

EmittedCode::EmittedCode(const ProgramSlice& program, const clang::ASTContext& context,
                         bool root, const clang::FunctionDecl* function)
    : program_(program), context_(context), root_(root) {
  if (function != nullptr && function->getBody() != nullptr) {
    ParameterAssignments finder;
    finder.TraverseStmt(function->getBody());
    assigned_parameters_ = finder.assigned;
  }
}

class EmittedVisitor : public clang::RecursiveASTVisitor<EmittedVisitor> {
 public:
  explicit EmittedVisitor(EmittedCode* code) : code_(code) {}

  bool TraverseStmt(clang::Stmt* stmt) {
    if (stmt != nullptr && code_->skipped.count(stmt)) return true;
    return RecursiveASTVisitor::TraverseStmt(stmt);
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    auto* var = dyn_cast<clang::VarDecl>(ref->getDecl());
    if (var == nullptr) return true;
    code_->referenced.insert(var);
    // The helper would hold its own copy, or a fresh uninitialized one, of a variable that
    // lives for the whole program.
    if (var->isStaticLocal() || (var->isLocalVarDecl() && var->hasExternalStorage())) {
      code_->problems.push_back(code_->Where(ref) + ": uses the static variable " +
                                var->getNameAsString());
    }
    return true;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) code_->Write(op->getLHS(), "assigns");
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) code_->Write(op->getSubExpr(), "increments");
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* call) {
    code_->Call(call);
    return true;
  }
  bool VisitDeclStmt(clang::DeclStmt* decl) {
    for (const clang::Decl* d : decl->decls()) {
      auto* var = dyn_cast<clang::VarDecl>(d);
      if (var == nullptr) continue;
      code_->referenced.insert(var);
      if (var->isStaticLocal()) {
        code_->problems.push_back(code_->Where(decl) + ": the static variable " +
                                  var->getNameAsString() + " would be shared with main");
      }
      if (var->getType()->isVariablyModifiedType()) {
        code_->problems.push_back(code_->Where(decl) + ": variable-length array " +
                                  var->getNameAsString());
      }
    }
    return true;
  }

 private:
  EmittedCode* code_;
};

void EmittedCode::Add(const clang::Stmt* stmt) {
  EmittedVisitor visitor(this);
  visitor.TraverseStmt(const_cast<clang::Stmt*>(stmt));
}

std::string EmittedCode::Where(const clang::Stmt* stmt) const {
  const clang::SourceManager& sources = context_.getSourceManager();
  const clang::PresumedLoc place =
      sources.getPresumedLoc(sources.getExpansionLoc(stmt->getBeginLoc()));
  if (place.isInvalid()) return "(unknown place)";
  return std::string(place.getFilename()) + ":" + std::to_string(place.getLine());
}

// Whether the object `lvalue` names is the helper's: a local variable (not static), or what a
// pointer the helper owns points to.
bool EmittedCode::OwnLvalue(const clang::Expr* lvalue, std::string* why) const {
  const clang::Expr* at = lvalue->IgnoreParenImpCasts();
  for (;;) {
    if (auto* ref = dyn_cast<clang::DeclRefExpr>(at)) {
      auto* var = dyn_cast<clang::VarDecl>(ref->getDecl());
      if (var == nullptr || var->hasGlobalStorage()) {
        *why = "the global or static variable " + ref->getDecl()->getNameAsString();
        return false;
      }
      return true;
    }
    const clang::Expr* pointer = nullptr;
    if (auto* subscript = dyn_cast<clang::ArraySubscriptExpr>(at)) {
      const clang::Expr* base = subscript->getBase()->IgnoreParenImpCasts();
      if (base->getType()->isArrayType()) {
        at = base;
        continue;
      }
      pointer = subscript->getBase();
    } else if (auto* member = dyn_cast<clang::MemberExpr>(at)) {
      if (!member->isArrow()) {
        at = member->getBase()->IgnoreParenImpCasts();
        continue;
      }
      pointer = member->getBase();
    } else if (auto* deref = dyn_cast<clang::UnaryOperator>(at);
               deref != nullptr && deref->getOpcode() == clang::UO_Deref) {
      pointer = deref->getSubExpr();
    }
    if (pointer != nullptr && OwnPointer(pointer)) return true;
    *why = "memory the main thread may use (through a pointer the helper does not own)";
    return false;
  }
}

// Whether a pointer value points to the helper's memory.
bool EmittedCode::OwnPointer(const clang::Expr* pointer) const {
  const clang::Expr* at = pointer->IgnoreParenCasts();
  if (at->isNullPointerConstant(const_cast<clang::ASTContext&>(context_),
                                clang::Expr::NPC_ValueDependentIsNotNull)) {
    return true;
  }
  // A compound literal is new memory, unless it is a pointer: then it points where its value
  // does ((char *){p}).
  if (auto* literal = dyn_cast<clang::CompoundLiteralExpr>(at)) {
    if (!literal->getType()->isPointerType()) return true;
    auto* init = dyn_cast<clang::InitListExpr>(literal->getInitializer());
    return init != nullptr && init->getNumInits() == 1 &&
           init->getInit(0)->isNullPointerConstant(const_cast<clang::ASTContext&>(context_),
                                                    clang::Expr::NPC_ValueDependentIsNotNull);
  }
  if (auto* address = dyn_cast<clang::UnaryOperator>(at);
      address != nullptr && address->getOpcode() == clang::UO_AddrOf) {
    std::string why;
    return OwnLvalue(address->getSubExpr(), &why);
  }
  if (auto* ref = dyn_cast<clang::DeclRefExpr>(at)) {
    auto* var = dyn_cast<clang::VarDecl>(ref->getDecl());
    if (var == nullptr || var->hasGlobalStorage()) return false;
    if (var->getType()->isArrayType()) return true;
    // A pointer parameter of a helper function, as its callers passed it (they pass the
    // helper's memory for every pointer parameter that is not const).
    auto* parameter = dyn_cast<clang::ParmVarDecl>(var);
    return !root_ && parameter != nullptr && parameter->getType()->isPointerType() &&
           !parameter->getType()->getPointeeType().isConstQualified() &&
           !assigned_parameters_.count(parameter);
  }
  return false;
}

void EmittedCode::Write(const clang::Expr* lvalue, const std::string& what) {
  std::string why;
  if (!OwnLvalue(lvalue, &why)) problems.push_back(Where(lvalue) + ": " + what + " " + why);
}

void EmittedCode::CheckPointerArguments(const clang::CallExpr* call,
                                        const clang::FunctionDecl* callee,
                                        const std::set<unsigned>& skip) {
  for (unsigned index = 0; index < call->getNumArgs(); ++index) {
    if (skip.count(index)) continue;
    clang::QualType type = index < callee->getNumParams()
                               ? callee->getParamDecl(index)->getType()
                               : call->getArg(index)->getType();
    if (!type->isPointerType() || type->getPointeeType().isConstQualified()) continue;
    // MPI's handles (MPI_File, and in Open MPI MPI_Comm, MPI_Datatype) are pointers that the
    // program never writes through.
    if (auto* named = type->getAs<clang::TypedefType>();
        named != nullptr && named->getDecl()->getName().startswith("MPI_")) {
      continue;
    }
    if (type->getPointeeType()->isFunctionType()) continue;
    if (!OwnPointer(call->getArg(index))) {
      problems.push_back(Where(call) + ": " + callee->getNameAsString() + " is passed, as " +
                         "argument " + std::to_string(index + 1) +
                         ", a pointer to memory the main thread may use");
    }
  }
}

void EmittedCode::Call(const clang::CallExpr* call) {
  const clang::FunctionDecl* callee = call->getDirectCallee();
  if (callee == nullptr) {
    problems.push_back(Where(call) + ": a call through a function pointer");
    return;
  }
  const std::string name = callee->getNameAsString();
  if (const MpiCall* io = FindMpiIoCall(name)) {
    if (io->prefetch.empty()) {
      problems.push_back(Where(call) + ": " + name + " has no prefetch counterpart");
      return;
    }
    std::set<unsigned> passed(io->needed.begin(), io->needed.end());
    if (io->kind == CallKind::kOpen) passed.insert(4);
    if (io->kind == CallKind::kView) passed.insert({4, 5});
    for (unsigned index = 0; index < call->getNumArgs(); ++index) {
      if (passed.count(index)) continue;
      skipped.insert(call->getArg(index));
      // The helper leaves the argument out: whatever it does must not matter (f(&buf[i++])).
      if (call->getArg(index)->HasSideEffects(context_)) {
        problems.push_back(Where(call) + ": an argument of " + name +
                           " that the prefetch call leaves out has side effects");
      }
    }
    // Open and close set the handle they are given: it must be the helper's own copy.
    if (io->kind == CallKind::kOpen || io->kind == CallKind::kClose) {
      const unsigned handle = io->kind == CallKind::kOpen ? 4 : 0;
      std::set<unsigned> others;
      for (unsigned index = 0; index < call->getNumArgs(); ++index) {
        if (index != handle) others.insert(index);
      }
      CheckPointerArguments(call, callee, others);
    }
    prefetches.push_back(call);
    return;
  }
  const clang::FunctionDecl* definition = Definition(program_, callee);
  if (definition != nullptr && program_.SliceOf(definition) != nullptr) {
    const auto needs = program_.known.needs.find(name);
    std::set<unsigned> needed;
    if (needs != program_.known.needs.end()) needed.insert(needs->second.begin(), needs->second.end());
    std::set<unsigned> unneeded;
    for (unsigned index = 0; index < call->getNumArgs(); ++index) {
      if (needed.count(index)) continue;
      unneeded.insert(index);
      if (call->getArg(index)->HasSideEffects(context_)) {
        problems.push_back(Where(call) + ": an argument of " + name +
                           " the helper does not need has side effects");
      }
      skipped.insert(call->getArg(index));
    }
    CheckPointerArguments(call, definition, unneeded);
    clone_calls.push_back(call);
    clones.insert(definition);
    return;
  }
  if (LibraryCallable(name)) {
    CheckPointerArguments(call, callee, {});
    return;
  }
  std::string why;
  if (definition != nullptr && CallableByHelper(program_, definition, &why)) {
    CheckPointerArguments(call, definition, {});
    return;
  }
  if (IsCommunication(name)) {
    problems.push_back(Where(call) + ": " + name + " communicates");
  } else if (definition == nullptr) {
    problems.push_back(Where(call) + ": " + name +
                       " is not in the input, and its effects cannot be seen");
  } else {
    problems.push_back(Where(call) + ": " + name + ": " + why);
  }
}

bool CallableByHelper(const ProgramSlice& program, const clang::FunctionDecl* function,
                      std::string* why) {
  // Memoized; a function being checked counts as callable, so recursion ends (each function's
  // own writes and calls are still checked).
  static std::map<const clang::FunctionDecl*, std::string> verdicts;
  auto known = verdicts.find(function);
  if (known != verdicts.end()) {
    *why = known->second;
    return why->empty();
  }
  verdicts[function] = "";
  EmittedCode code(program, program.unit_of.at(function)->getASTContext(), /*root=*/false,
                   function);
  code.Add(function->getBody());
  std::string verdict;
  if (!code.prefetches.empty() || !code.clones.empty()) verdict = "it makes MPI-IO calls";
  if (verdict.empty() && !code.problems.empty()) verdict = code.problems.front();
  verdicts[function] = verdict;
  *why = verdict;
  return verdict.empty();
}

}  // namespace slice
}  // namespace stagio
