// Locals whose address never leaves the function's own code. A local's address may be kept
// in another local, a holder: a field of a struct (tilefft_job job = {&run, ...}) or a local
// pointer (plan *q = &p). If every place the address goes is such a holder, and each holder
// is only ever dereferenced where it stands (q->reads, job.run->count), never passed, copied,
// returned or itself pointed to, then no function the program calls can learn the address,
// except from the arguments that name the local itself. A call that may write anything it
// can reach (a function calling a library the slicer cannot see) cannot write such a local.
//
// The function's own writes through a holder (job.run->count = 1) still write the local:
// the slicer's rule for writes through pointers, which does not use this, covers them.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "clang/AST/ParentMap.h"
#include "clang/AST/Stmt.h"
#include "expressions.h"

namespace stagio {
namespace slice {

// A place a local's address is kept: a local variable, and the field of it that holds the
// address ("" when the variable itself is the pointer).
struct AddressHolder {
  const clang::VarDecl* var = nullptr;
  std::string field;
  bool operator<(const AddressHolder& other) const {
    return var != other.var ? var < other.var : field < other.field;
  }
};

class AddressHolders {
 public:
  AddressHolders(const clang::Stmt* body, const clang::ParentMap& parents)
      : body_(body), parents_(parents) {}

  // `address` (&v, &v.f, an array v decaying) is kept somewhere: where it goes, straight
  // into a holder, or anywhere else (then v is open).
  void Note(const clang::VarDecl* var, const clang::Stmt* address);

  // The noted locals whose address stays in holders that stay put.
  VarSet Sealed() const;

 private:
  std::optional<AddressHolder> HolderOf(const clang::Stmt* address) const;
  bool StaysPut(const AddressHolder& holder) const;

  const clang::Stmt* body_;
  const clang::ParentMap& parents_;
  std::map<const clang::VarDecl*, std::set<AddressHolder>> holders_;
  VarSet open_;
};

}  // namespace slice
}  // namespace stagio
