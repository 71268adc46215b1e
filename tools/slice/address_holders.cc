#include "address_holders.h"

#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"

namespace stagio {
namespace slice {

using clang::dyn_cast;
using clang::dyn_cast_or_null;

namespace {

bool IsLocal(const clang::VarDecl* var) {
  return var != nullptr && var->hasLocalStorage();
}

// Whether an expression's value goes nowhere: a statement of its own, a for loop's init or
// increment, the left of a comma, a cast to void. (`g = (q = &v)` and `keep(q++)` hand the
// address on.)
bool ValueDiscarded(const clang::Stmt* expr, const clang::ParentMap& parents) {
  const clang::Stmt* at = expr;
  const clang::Stmt* parent = parents.getParent(at);
  while (parent != nullptr && clang::isa<clang::ParenExpr>(parent)) {
    at = parent;
    parent = parents.getParent(at);
  }
  if (parent == nullptr) return false;
  if (clang::isa<clang::CompoundStmt>(parent) || clang::isa<clang::LabelStmt>(parent) ||
      clang::isa<clang::SwitchCase>(parent)) {
    return true;
  }
  if (auto* cast = dyn_cast<clang::CastExpr>(parent)) return cast->getType()->isVoidType();
  if (auto* op = dyn_cast<clang::BinaryOperator>(parent)) {
    return op->getOpcode() == clang::BO_Comma && op->getLHS() == at;
  }
  if (auto* loop = dyn_cast<clang::ForStmt>(parent)) {
    return loop->getInit() == at || loop->getInc() == at || loop->getBody() == at;
  }
  if (auto* branch = dyn_cast<clang::IfStmt>(parent)) {
    return branch->getThen() == at || branch->getElse() == at;
  }
  if (auto* loop = dyn_cast<clang::WhileStmt>(parent)) return loop->getBody() == at;
  if (auto* loop = dyn_cast<clang::DoStmt>(parent)) return loop->getBody() == at;
  return false;
}

// A struct or union field that is a pointer, not in a union: a slot one address goes in.
bool PointerSlot(const clang::FieldDecl* field) {
  return field != nullptr && !field->getParent()->isUnion() && field->getType()->isPointerType();
}

// The uses of one holder, checked: is it only ever dereferenced where it stands?
class HolderUses : public clang::RecursiveASTVisitor<HolderUses> {
 public:
  HolderUses(const AddressHolder& holder, const clang::ParentMap& parents)
      : holder_(holder), parents_(parents) {}
  bool stays_put = true;

  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (ref->getDecl() != holder_.var) return true;
    const clang::Stmt* operand = nullptr;
    const clang::Stmt* use = UseOf(ref, parents_, &operand);
    if (holder_.field.empty()) {
      stays_put = stays_put && PointerStaysPut(ref);
      return true;
    }
    // A struct holding the address in one field: its other fields may be used freely.
    auto* member = dyn_cast_or_null<clang::MemberExpr>(use);
    if (member != nullptr && !member->isArrow() && member->getBase() == operand) {
      auto* field = dyn_cast<clang::FieldDecl>(member->getMemberDecl());
      if (field != nullptr && FieldName(field) != holder_.field) return true;
      stays_put = stays_put && PointerStaysPut(member);
      return true;
    }
    stays_put = stays_put && (Reassigned(use, operand) || Measured(use));
    return true;
  }

 private:
  // Assigned to (or moved, with += and the like), the assignment's value going nowhere.
  bool Reassigned(const clang::Stmt* use, const clang::Stmt* operand) const {
    auto* op = dyn_cast_or_null<clang::BinaryOperator>(use);
    return op != nullptr && op->isAssignmentOp() && op->getLHS() == operand &&
           ValueDiscarded(op, parents_);
  }
  static bool Measured(const clang::Stmt* use) {
    return use != nullptr && clang::isa<clang::UnaryExprOrTypeTraitExpr>(use);
  }

  // `pointer` evaluates to the held address: it may be compared, tested, stored into or
  // moved, and dereferenced in place; anything else hands the address on.
  bool PointerStaysPut(const clang::Expr* pointer) const {
    if (!pointer->getType()->isPointerType()) return false;
    const clang::Stmt* operand = nullptr;
    const clang::Stmt* use = UseOf(pointer, parents_, &operand);
    if (use == nullptr) return false;
    if (Reassigned(use, operand) || Measured(use)) return true;
    if (auto* op = dyn_cast<clang::BinaryOperator>(use)) {
      return op->isComparisonOp() || op->isLogicalOp();
    }
    if (auto* op = dyn_cast<clang::UnaryOperator>(use)) {
      if (op->getOpcode() == clang::UO_Deref) return AccessStaysPut(op);
      return op->getOpcode() == clang::UO_LNot ||
             (op->isIncrementDecrementOp() && ValueDiscarded(op, parents_));
    }
    if (auto* member = dyn_cast<clang::MemberExpr>(use);
        member != nullptr && member->isArrow() && member->getBase() == operand) {
      return AccessStaysPut(member);
    }
    if (auto* subscript = dyn_cast<clang::ArraySubscriptExpr>(use);
        subscript != nullptr && subscript->getBase() == operand) {
      return AccessStaysPut(subscript);
    }
    return clang::isa<clang::IfStmt>(use) || clang::isa<clang::WhileStmt>(use) ||
           clang::isa<clang::DoStmt>(use) || clang::isa<clang::ForStmt>(use);
  }

  // An lvalue reached through the holder (*q, q->x, q[i], and .f or [i] on those) may be read
  // and written where it stands; taking its address, or letting an array in it decay to a
  // pointer other than to index it, hands out an address inside the local.
  bool AccessStaysPut(const clang::Expr* access) const {
    const clang::Stmt* at = access;
    for (;;) {
      const clang::Stmt* operand = nullptr;
      const clang::Stmt* use = UseOf(at, parents_, &operand);
      if (auto* member = dyn_cast_or_null<clang::MemberExpr>(use);
          member != nullptr && !member->isArrow() && member->getBase() == operand) {
        at = member;
        continue;
      }
      if (auto* subscript = dyn_cast_or_null<clang::ArraySubscriptExpr>(use);
          subscript != nullptr && subscript->getBase() == operand) {
        at = subscript;
        continue;
      }
      if (use == nullptr) return false;
      if (auto* op = dyn_cast<clang::UnaryOperator>(use);
          op != nullptr && op->getOpcode() == clang::UO_AddrOf) {
        return false;
      }
      return !llvm::cast<clang::Expr>(at)->getType()->isArrayType();
    }
  }

  const AddressHolder& holder_;
  const clang::ParentMap& parents_;
};

}  // namespace

void AddressHolders::Note(const clang::VarDecl* var, const clang::Stmt* address) {
  if (!IsLocal(var)) return;
  std::optional<AddressHolder> holder = HolderOf(address);
  if (holder && holder->var != var) {
    holders_[var].insert(*holder);
  } else {
    open_.insert(var);
  }
}

// Straight into a holder: the initializer of a local pointer, or of a local struct's pointer
// field (one level of initializer list), or `q = &v` or `h.f = &v` as a statement of its own.
std::optional<AddressHolder> AddressHolders::HolderOf(const clang::Stmt* address) const {
  const clang::Stmt* at = nullptr;
  const clang::Stmt* parent = UseOf(address, parents_, &at);
  const clang::InitListExpr* list = dyn_cast_or_null<clang::InitListExpr>(parent);
  unsigned index = 0;
  if (list != nullptr) {
    if (list->isSyntacticForm() && list->getSemanticForm() != nullptr) {
      list = list->getSemanticForm();
    }
    bool found = false;
    for (unsigned i = 0; i < list->getNumInits() && !found; ++i) {
      if (list->getInit(i) == at) {
        index = i;
        found = true;
      }
    }
    if (!found) return std::nullopt;
    parent = UseOf(parent, parents_, &at);
  }
  if (auto* decl = dyn_cast_or_null<clang::DeclStmt>(parent)) {
    const clang::VarDecl* var = nullptr;
    for (const clang::Decl* d : decl->decls()) {
      auto* candidate = dyn_cast<clang::VarDecl>(d);
      if (candidate != nullptr && candidate->getInit() != nullptr &&
          (candidate->getInit() == at || candidate->getInit()->IgnoreParenCasts() == at)) {
        var = candidate;
      }
    }
    if (!IsLocal(var) || var->isStaticLocal()) return std::nullopt;
    if (list == nullptr) {
      if (!var->getType()->isPointerType()) return std::nullopt;
      return AddressHolder{var, ""};
    }
    const clang::RecordDecl* record = var->getType()->getAsRecordDecl();
    if (record == nullptr || record->isUnion()) return std::nullopt;
    // The semantic initializer list has one slot per named field, in order.
    unsigned i = 0;
    for (const clang::FieldDecl* field : record->fields()) {
      if (field->isUnnamedBitfield()) continue;
      if (i++ != index) continue;
      if (!PointerSlot(field)) return std::nullopt;
      return AddressHolder{var, FieldName(field)};
    }
    return std::nullopt;
  }
  auto* assignment = dyn_cast_or_null<clang::BinaryOperator>(parent);
  if (list != nullptr || assignment == nullptr || assignment->getOpcode() != clang::BO_Assign ||
      assignment->getRHS() != at || !ValueDiscarded(assignment, parents_)) {
    return std::nullopt;
  }
  const clang::Expr* target = assignment->getLHS()->IgnoreParenImpCasts();
  if (const clang::VarDecl* pointer = VarOf(target)) {
    if (!IsLocal(pointer) || pointer->isStaticLocal() || !pointer->getType()->isPointerType()) {
      return std::nullopt;
    }
    return AddressHolder{pointer, ""};
  }
  // h.f = &v, f a pointer field of the local struct h itself.
  auto* member = dyn_cast<clang::MemberExpr>(target);
  if (member == nullptr || member->isArrow()) return std::nullopt;
  const clang::VarDecl* holder = VarOf(member->getBase());
  auto* field = dyn_cast<clang::FieldDecl>(member->getMemberDecl());
  if (!PointerSlot(field) || !IsLocal(holder) || holder->isStaticLocal()) return std::nullopt;
  return AddressHolder{holder, FieldName(field)};
}

bool AddressHolders::StaysPut(const AddressHolder& holder) const {
  HolderUses uses(holder, parents_);
  uses.TraverseStmt(const_cast<clang::Stmt*>(body_));
  return uses.stays_put;
}

VarSet AddressHolders::Sealed() const {
  VarSet sealed;
  for (const auto& [var, holders] : holders_) {
    if (open_.count(var)) continue;
    bool all = true;
    for (const AddressHolder& holder : holders) all = all && StaysPut(holder);
    if (all) sealed.insert(var);
  }
  return sealed;
}

}  // namespace slice
}  // namespace stagio
