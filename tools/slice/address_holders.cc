#include "address_holders.h"

#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"

namespace stagio {
namespace slice {

using clang::dyn_cast;
using clang::dyn_cast_or_null;

namespace {

// Past parentheses and casts, upwards.
const clang::Stmt* Climb(const clang::Stmt* at, const clang::ParentMap& parents,
                         const clang::Stmt** parent) {
  *parent = parents.getParent(at);
  while (*parent != nullptr &&
         (clang::isa<clang::ParenExpr>(*parent) || clang::isa<clang::CastExpr>(*parent))) {
    at = *parent;
    *parent = parents.getParent(at);
  }
  return at;
}

bool IsLocal(const clang::VarDecl* var) {
  return var != nullptr && var->hasLocalStorage();
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
  static bool Reassigned(const clang::Stmt* use, const clang::Stmt* operand) {
    auto* op = dyn_cast_or_null<clang::BinaryOperator>(use);
    return op != nullptr && op->isAssignmentOp() && op->getLHS() == operand;
  }
  static bool Measured(const clang::Stmt* use) {
    return use != nullptr && clang::isa<clang::UnaryExprOrTypeTraitExpr>(use);
  }

  // `pointer` evaluates to the held address: it may be compared, tested, stored into or
  // moved, and dereferenced in place; anything else hands the address on.
  bool PointerStaysPut(const clang::Stmt* pointer) const {
    const clang::Stmt* operand = nullptr;
    const clang::Stmt* use = UseOf(pointer, parents_, &operand);
    if (use == nullptr) return false;
    if (Reassigned(use, operand) || Measured(use)) return true;
    if (auto* op = dyn_cast<clang::BinaryOperator>(use)) {
      return op->isComparisonOp() || op->isLogicalOp();
    }
    if (auto* op = dyn_cast<clang::UnaryOperator>(use)) {
      if (op->getOpcode() == clang::UO_Deref) return AccessStaysPut(op);
      return op->getOpcode() == clang::UO_LNot || op->isIncrementDecrementOp();
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
      if (auto* op = dyn_cast_or_null<clang::UnaryOperator>(use);
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

// Straight into a holder: the initializer of a local pointer or struct (through an
// initializer list, to the struct's field), or the right side of `q = &v` or `h.f = &v`.
std::optional<AddressHolder> AddressHolders::HolderOf(const clang::Stmt* address) const {
  const clang::Stmt* parent = nullptr;
  const clang::Stmt* at = Climb(address, parents_, &parent);
  const clang::InitListExpr* outer = nullptr;
  unsigned index = 0;
  while (auto* list = dyn_cast_or_null<clang::InitListExpr>(parent)) {
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
    outer = list;
    at = Climb(parent, parents_, &parent);
  }
  const clang::VarDecl* var = nullptr;
  if (auto* decl = dyn_cast_or_null<clang::DeclStmt>(parent)) {
    for (const clang::Decl* d : decl->decls()) {
      auto* candidate = dyn_cast<clang::VarDecl>(d);
      if (candidate != nullptr && candidate->getInit() != nullptr &&
          (candidate->getInit() == at || candidate->getInit()->IgnoreParenCasts() == at)) {
        var = candidate;
      }
    }
    if (!IsLocal(var) || var->isStaticLocal()) return std::nullopt;
    if (outer == nullptr) {
      if (!var->getType()->isPointerType()) return std::nullopt;
      return AddressHolder{var, ""};
    }
    const clang::RecordDecl* record = var->getType()->getAsRecordDecl();
    if (record == nullptr || record->isUnion()) return std::nullopt;
    unsigned i = 0;
    for (const clang::FieldDecl* field : record->fields()) {
      if (i++ == index) return AddressHolder{var, FieldName(field)};
    }
    return std::nullopt;
  }
  auto* assignment = dyn_cast_or_null<clang::BinaryOperator>(parent);
  if (outer != nullptr || assignment == nullptr || assignment->getOpcode() != clang::BO_Assign ||
      assignment->getRHS() != at) {
    return std::nullopt;
  }
  const clang::Expr* target = assignment->getLHS()->IgnoreParenImpCasts();
  if (const clang::VarDecl* pointer = VarOf(target)) {
    if (!IsLocal(pointer) || pointer->isStaticLocal() || !pointer->getType()->isPointerType()) {
      return std::nullopt;
    }
    return AddressHolder{pointer, ""};
  }
  // h.f = &v, or h.f.g = &v: the holder is h's top field f.
  const clang::MemberExpr* top = nullptr;
  while (auto* member = dyn_cast<clang::MemberExpr>(target)) {
    if (member->isArrow()) return std::nullopt;
    top = member;
    target = member->getBase()->IgnoreParenImpCasts();
  }
  const clang::VarDecl* holder = VarOf(target);
  auto* field = top != nullptr ? dyn_cast<clang::FieldDecl>(top->getMemberDecl()) : nullptr;
  if (field == nullptr || !IsLocal(holder) || holder->isStaticLocal()) return std::nullopt;
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
