#include "function_summaries.h"

#include <tuple>

#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "expressions.h"

namespace stagio {
namespace slice {

using clang::dyn_cast;

namespace {

// The pointer parameters of one function that it may keep a copy of, and those it passes on
// to other input functions: (callee, argument index, parameter index).
class StoredParameterFinder : public clang::RecursiveASTVisitor<StoredParameterFinder> {
 public:
  StoredParameterFinder(const clang::ParentMap& parents, const std::set<std::string>& inputs)
      : parents_(parents), inputs_(inputs) {}
  std::set<unsigned> stored;
  std::vector<std::tuple<std::string, unsigned, unsigned>> passed;

  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    auto* parameter = dyn_cast<clang::ParmVarDecl>(ref->getDecl());
    if (parameter == nullptr || !parameter->getType()->isPointerType()) return true;
    const unsigned mine = parameter->getFunctionScopeIndex();
    const clang::Stmt* operand = nullptr;
    const clang::Stmt* use = UseOf(ref, parents_, &operand);
    if (use == nullptr) return true;
    if (auto* member = dyn_cast<clang::MemberExpr>(use); member != nullptr && member->isArrow()) {
      return true;
    }
    if (auto* subscript = dyn_cast<clang::ArraySubscriptExpr>(use);
        subscript != nullptr && subscript->getBase() == operand) {
      return true;
    }
    if (auto* op = dyn_cast<clang::UnaryOperator>(use);
        op != nullptr && (op->getOpcode() == clang::UO_Deref || op->getOpcode() == clang::UO_LNot)) {
      return true;
    }
    if (auto* op = dyn_cast<clang::BinaryOperator>(use);
        op != nullptr && (op->isComparisonOp() || op->isLogicalOp())) {
      return true;
    }
    if (clang::isa<clang::IfStmt>(use) || clang::isa<clang::WhileStmt>(use) ||
        clang::isa<clang::UnaryExprOrTypeTraitExpr>(use)) {
      return true;
    }
    if (auto* call = dyn_cast<clang::CallExpr>(use)) {
      const int index = ArgumentIndex(call, operand);
      const std::string name = CalleeName(call);
      if (index >= 0 && WritesOnlyItsArguments(name)) return true;
      if (index >= 0 && inputs_.count(name)) {
        passed.emplace_back(name, static_cast<unsigned>(index), mine);
        return true;
      }
    }
    stored.insert(mine);
    return true;
  }

 private:
  const clang::ParentMap& parents_;
  const std::set<std::string>& inputs_;
};

// Whether a function body writes a global variable, and the functions it calls.
// Local pointers that only ever hold a pointer reached through the function's parameters
// (`double *heap = top->values`): writing through one writes what the caller handed over.
class ParameterDerivedPointers : public clang::RecursiveASTVisitor<ParameterDerivedPointers> {
 public:
  std::set<const clang::VarDecl*> Derived() const {
    std::set<const clang::VarDecl*> derived;
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [var, sources] : sources_) {
        if (derived.count(var) || taken_.count(var)) continue;
        bool all = !sources.empty();
        for (const clang::VarDecl* source : sources) {
          all = all && source != nullptr &&
                (clang::isa<clang::ParmVarDecl>(source) || derived.count(source));
        }
        if (all) grew = derived.insert(var).second || grew;
      }
    }
    return derived;
  }
  bool VisitVarDecl(clang::VarDecl* var) {
    if (var->getType()->isPointerType() && var->isLocalVarDecl() && !var->isStaticLocal()) {
      auto& sources = sources_[var];
      if (var->getInit() != nullptr) sources.push_back(PointerBase(var->getInit()));
      else sources.push_back(nullptr);
    }
    return true;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (!op->isAssignmentOp()) return true;
    if (const clang::VarDecl* var = VarOf(op->getLHS()); var != nullptr && sources_.count(var)) {
      sources_[var].push_back(op->getOpcode() == clang::BO_Assign ? PointerBase(op->getRHS())
                                                                  : var);
    }
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->getOpcode() == clang::UO_AddrOf) {
      if (const clang::VarDecl* var = VarOf(op->getSubExpr())) taken_.insert(var);
    }
    return true;
  }

 private:
  std::map<const clang::VarDecl*, std::vector<const clang::VarDecl*>> sources_;
  std::set<const clang::VarDecl*> taken_;
};

constexpr const char* kCallThroughPointer = "(through a pointer)";

class SideEffectFinder : public clang::RecursiveASTVisitor<SideEffectFinder> {
 public:
  explicit SideEffectFinder(std::set<const clang::VarDecl*> derived = {})
      : derived_(std::move(derived)) {}
  bool writes_global = false;
  std::set<std::string> callees;

  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) Written(op->getLHS());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) Written(op->getSubExpr());
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* call) {
    const std::string name = CalleeName(call);
    // A call through a pointer: anything may happen.
    callees.insert(name.empty() ? std::string(kCallThroughPointer) : name);
    return true;
  }
  // A function named otherwise than to call it (qsort's comparator) may be called by whoever
  // gets it: it counts as called.
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (auto* function = dyn_cast<clang::FunctionDecl>(ref->getDecl())) {
      callees.insert(function->getNameAsString());
    }
    return true;
  }

 private:
  // A write of a global, or through a pointer that is not one of the function's parameters
  // (a global pointer, a local one that may hold anything): the function may write memory its
  // callers did not hand it.
  void Written(const clang::Expr* lvalue) {
    const clang::VarDecl* var = BaseVar(lvalue);
    if (var != nullptr) {
      if (var->hasGlobalStorage()) writes_global = true;
      return;
    }
    const clang::VarDecl* pointer = PointerBase(lvalue);
    if (pointer == nullptr ||
        (!clang::isa<clang::ParmVarDecl>(pointer) && !derived_.count(pointer))) {
      writes_global = true;
    }
  }

  std::set<const clang::VarDecl*> derived_;
};

// What one function writes through its pointer parameters, itself (callees not yet added).
class ParameterWriteFinder : public clang::RecursiveASTVisitor<ParameterWriteFinder> {
 public:
  std::map<unsigned, std::set<std::string>> writes;
  // Calls that pass a parameter's pointer on: (callee, argument index, parameter index).
  std::vector<std::tuple<std::string, unsigned, unsigned>> passed;

  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) NoteParameterWrite(op->getLHS(), &writes);
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) NoteParameterWrite(op->getSubExpr(), &writes);
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* call) {
    const std::string name = CalleeName(call);
    for (unsigned index = 0; index < call->getNumArgs(); ++index) {
      const clang::Expr* arg = call->getArg(index);
      const clang::QualType type = arg->IgnoreParenImpCasts()->getType();
      if (!type->isPointerType() || type->getPointeeType().isConstQualified()) continue;
      std::map<unsigned, std::set<std::string>> through;
      NoteParameterWrite(arg, &through);
      for (const auto& [parameter, fields] : through) {
        // A pointer passed whole to another function: that function's writes, added later.
        const bool whole = fields.count("") > 0 && !clang::isa<clang::UnaryOperator>(
                                                       arg->IgnoreParenCasts());
        if (whole && !name.empty()) {
          passed.emplace_back(name, index, parameter);
        } else {
          writes[parameter].insert(fields.begin(), fields.end());
        }
      }
    }
    return true;
  }
};

// The fields a function's body reads, other than to update the same field (`p->count += n`
// reads count only to write it), and the functions it calls.
class FieldUseFinder : public clang::RecursiveASTVisitor<FieldUseFinder> {
 public:
  std::set<std::string> fields;
  std::set<std::string> callees;
  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) updated_.insert(op->getLHS()->IgnoreParenImpCasts());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) updated_.insert(op->getSubExpr()->IgnoreParenImpCasts());
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* member) {
    if (updated_.count(member)) return true;
    if (auto* field = dyn_cast<clang::FieldDecl>(member->getMemberDecl())) {
      fields.insert(FieldName(field));
    }
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* call) {
    callees.insert(CalleeName(call));
    return true;
  }

 private:
  std::set<const clang::Expr*> updated_;
};

}  // namespace

std::map<std::string, std::set<unsigned>> FindStoredParameters(
    const std::vector<const clang::FunctionDecl*>& functions) {
  std::set<std::string> inputs;
  for (const clang::FunctionDecl* function : functions) inputs.insert(function->getNameAsString());
  std::map<std::string, std::set<unsigned>> stored;
  std::map<std::string, std::vector<std::tuple<std::string, unsigned, unsigned>>> passed;
  for (const clang::FunctionDecl* function : functions) {
    clang::ParentMap parents(function->getBody());
    StoredParameterFinder finder(parents, inputs);
    finder.TraverseStmt(function->getBody());
    stored[function->getNameAsString()] = finder.stored;
    passed[function->getNameAsString()] = finder.passed;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [name, calls] : passed) {
      for (const auto& [callee, index, parameter] : calls) {
        if (stored[callee].count(index) && stored[name].insert(parameter).second) changed = true;
      }
    }
  }
  return stored;
}

namespace {

// The functions that write only through their arguments, and whose callees all do, or (with
// `libraries`) are defined nowhere in the units.
std::set<std::string> ContainedFunctions(const std::vector<const clang::FunctionDecl*>& functions,
                                         bool libraries, const std::set<std::string>& defined) {
  std::map<std::string, SideEffectFinder> effects;
  for (const clang::FunctionDecl* function : functions) {
    ParameterDerivedPointers derived;
    derived.TraverseStmt(function->getBody());
    SideEffectFinder finder(derived.Derived());
    finder.TraverseStmt(function->getBody());
    effects[function->getNameAsString()] = finder;
  }
  std::set<std::string> contained;
  for (const auto& [name, finder] : effects) {
    if (!finder.writes_global) contained.insert(name);
  }
  // Drop the functions that call one that may write anything, until none is dropped.
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (auto it = contained.begin(); it != contained.end();) {
      bool calls_unknown = false;
      for (const std::string& callee : effects[*it].callees) {
        const bool library = libraries && !effects.count(callee) && !defined.count(callee) &&
                             callee != kCallThroughPointer;
        calls_unknown = calls_unknown || (!WritesOnlyItsArguments(callee) &&
                                          !contained.count(callee) && !library);
      }
      if (calls_unknown) {
        it = contained.erase(it);
        dropped = true;
      } else {
        ++it;
      }
    }
  }
  return contained;
}

}  // namespace

std::set<std::string> FunctionsWritingOnlyArguments(
    const std::vector<const clang::FunctionDecl*>& functions) {
  return ContainedFunctions(functions, /*libraries=*/false, {});
}

std::set<std::string> FunctionsWritingOnlyArgumentsAndLibraries(
    const std::vector<const clang::FunctionDecl*>& functions, const std::set<std::string>& defined) {
  return ContainedFunctions(functions, /*libraries=*/true, defined);
}

ParameterWrites FindParameterWrites(const std::vector<const clang::FunctionDecl*>& functions) {
  ParameterWrites writes;
  std::map<std::string, std::vector<std::tuple<std::string, unsigned, unsigned>>> passed;
  for (const clang::FunctionDecl* function : functions) {
    ParameterWriteFinder finder;
    finder.TraverseStmt(function->getBody());
    writes[function->getNameAsString()] = finder.writes;
    passed[function->getNameAsString()] = finder.passed;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [name, calls] : passed) {
      for (const auto& [callee, index, parameter] : calls) {
        std::set<std::string>& mine = writes[name][parameter];
        const size_t before = mine.size();
        auto theirs = writes.find(callee);
        if (theirs == writes.end()) {
          // Not an input function: MPI's and the C library's calls write what the pointer
          // points to, as a whole.
          mine.insert("");
        } else if (auto fields = theirs->second.find(index); fields != theirs->second.end()) {
          mine.insert(fields->second.begin(), fields->second.end());
        }
        changed = changed || mine.size() != before;
      }
    }
  }
  return writes;
}

std::map<std::string, std::set<std::string>> FindFieldsReadBy(
    const std::vector<const clang::FunctionDecl*>& functions) {
  std::map<std::string, std::set<std::string>> fields;
  std::map<std::string, std::set<std::string>> callees;
  for (const clang::FunctionDecl* function : functions) {
    FieldUseFinder finder;
    finder.TraverseStmt(function->getBody());
    fields[function->getNameAsString()] = finder.fields;
    callees[function->getNameAsString()] = finder.callees;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, mine] : fields) {
      const size_t before = mine.size();
      for (const std::string& callee : callees[name]) {
        auto theirs = fields.find(callee);
        if (theirs != fields.end() && theirs->first != name) {
          mine.insert(theirs->second.begin(), theirs->second.end());
        }
      }
      changed = changed || mine.size() != before;
    }
  }
  return fields;
}

}  // namespace slice
}  // namespace stagio
