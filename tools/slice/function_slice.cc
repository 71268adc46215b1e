#include "function_slice.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "clang/AST/Expr.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Analysis/Analyses/Dominators.h"
#include "clang/Analysis/CFG.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/BitVector.h"
#include "address_holders.h"
#include "expressions.h"
#include "mpi_calls.h"

namespace stagio {
namespace slice {
namespace {

using clang::dyn_cast;

// One statement of the CFG (an element, or a block's branch condition) and what it does to
// the function's variables.
struct Node {
  const clang::Stmt* stmt = nullptr;
  const clang::CFGBlock* block = nullptr;
  VarSet must_defs;  // written whole: earlier definitions no longer reach
  VarSet may_defs;   // perhaps written, or written in part
  VarSet uses;
  // The criterion this statement makes: an MPI-IO call, or a call of a function that makes
  // some (callee_needs), and which of its arguments the slice needs.
  const clang::CallExpr* criterion = nullptr;
  std::vector<unsigned> needed_arguments;
  bool jump = false;                        // break, continue, goto or return
  // A call whose results the helper cannot have: one that communicates, or an MPI-IO query
  // (the helper makes neither). Its definitions end the slice: they are cuts.
  std::string unavailable;
  // What a read puts in its buffer and status: the helper's prefetch reads no data, so a
  // value that comes from there is a cut too.
  VarSet file_data;
  std::string file_data_from;  // the call that reads it
  // The pointer parameters this statement writes through (p->f = x, *p = x, f(&p->g)), and
  // for each the fields written ("" for the whole object).
  std::map<unsigned, std::set<std::string>> writes_through_parameters;
};








// Whether an lvalue (or &lvalue) is a struct field no slice reads: writing it changes
// nothing any slice needs (a counter, a timing, a checksum kept in a struct).
bool UnreadField(const clang::Expr* expr, const KnownFunctions& known) {
  const clang::Expr* at = expr->IgnoreParenCasts();
  if (auto* address = dyn_cast<clang::UnaryOperator>(at);
      address != nullptr && address->getOpcode() == clang::UO_AddrOf) {
    at = address->getSubExpr()->IgnoreParenCasts();
  }
  auto* member = dyn_cast<clang::MemberExpr>(at);
  if (member == nullptr) return false;
  auto* field = dyn_cast<clang::FieldDecl>(member->getMemberDecl());
  return field != nullptr && !field->getParent()->isUnion() &&
         !known.fields_read.count(FieldName(field));
}


// The arguments of a call the slice follows, or null when it follows all of them: an MPI-IO
// call the helper makes, or a call of a function whose slice exists, needs only some (never a
// buffer or a status).
const std::vector<unsigned>* NeededArguments(const clang::CallExpr* call,
                                             const KnownFunctions& known) {
  const std::string name = CalleeName(call);
  if (const MpiCall* io = FindMpiIoCall(name); io != nullptr && !io->prefetch.empty()) {
    return &io->needed;
  }
  auto callee = known.needs.find(name);
  return callee != known.needs.end() ? &callee->second : nullptr;
}

// A visitor that, in a call the helper makes differently (NeededArguments), visits the call
// and then only the arguments it needs: what the helper leaves out (a buffer, a status) is
// no use and no definition of the slice. Other calls are traversed whole.
template <typename Derived>
class FollowedArgumentsVisitor : public clang::RecursiveASTVisitor<Derived> {
 public:
  explicit FollowedArgumentsVisitor(const KnownFunctions& known) : known_(known) {}
  bool TraverseCallExpr(clang::CallExpr* call) {
    const std::vector<unsigned>* needed = NeededArguments(call, known_);
    if (needed == nullptr) return clang::RecursiveASTVisitor<Derived>::TraverseCallExpr(call);
    if (!this->getDerived().WalkUpFromCallExpr(call)) return false;
    for (unsigned index : *needed) {
      if (index < call->getNumArgs()) this->getDerived().TraverseStmt(call->getArg(index));
    }
    return true;
  }

 protected:
  const KnownFunctions& known_;
};

// The fields a statement reads (of the calls NeededArguments knows, in the arguments they
// need only).
class FieldCollector : public FollowedArgumentsVisitor<FieldCollector> {
 public:
  FieldCollector(std::set<std::string>* fields, const KnownFunctions& known)
      : FollowedArgumentsVisitor(known), fields_(fields) {}
  bool VisitCallExpr(clang::CallExpr* call) {
    if (NeededArguments(call, known_) != nullptr) return true;
    // Called as it is: an input function reads the fields its body (and its callees) read;
    // another function may read every field of a struct it is given.
    auto input = known_.fields_read_by.find(CalleeName(call));
    if (input != known_.fields_read_by.end()) {
      fields_->insert(input->second.begin(), input->second.end());
      return true;
    }
    for (const clang::Expr* arg : call->arguments()) {
      clang::QualType type = arg->IgnoreParenImpCasts()->getType();
      if (type->isPointerType()) type = type->getPointeeType();
      AllFields(type, 0);
    }
    return true;
  }
  bool VisitMemberExpr(clang::MemberExpr* member) {
    if (auto* field = dyn_cast<clang::FieldDecl>(member->getMemberDecl())) {
      fields_->insert(FieldName(field));
    }
    return true;
  }

 private:
  void AllFields(clang::QualType type, int depth) {
    const clang::RecordDecl* record = type->getAsRecordDecl();
    if (record == nullptr || depth > 8) return;
    for (const clang::FieldDecl* field : record->fields()) {
      fields_->insert(FieldName(field));
      AllFields(field->getType(), depth + 1);
    }
  }

  std::set<std::string>* fields_;
};



// Reads every variable under `stmt` into `uses`; of the calls NeededArguments knows, only
// the arguments they need.
class UseCollector : public FollowedArgumentsVisitor<UseCollector> {
 public:
  UseCollector(VarSet* uses, const KnownFunctions& known)
      : FollowedArgumentsVisitor(known), uses_(uses) {}
  // sizeof and alignof do not evaluate their operand.
  bool TraverseUnaryExprOrTypeTraitExpr(clang::UnaryExprOrTypeTraitExpr*) { return true; }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (auto* var = dyn_cast<clang::VarDecl>(ref->getDecl())) uses_->insert(var);
    return true;
  }

 private:
  VarSet* uses_;
};

// The calls of input functions with a slice under `stmt` (in the arguments that are followed).
class SlicedCallFinder : public FollowedArgumentsVisitor<SlicedCallFinder> {
 public:
  SlicedCallFinder(const KnownFunctions& known, std::vector<const clang::CallExpr*>* calls)
      : FollowedArgumentsVisitor(known), calls_(calls) {}
  bool VisitCallExpr(clang::CallExpr* call) {
    if (known_.needs.count(CalleeName(call))) calls_->push_back(call);
    return true;
  }

 private:
  std::vector<const clang::CallExpr*>* calls_;
};

void ValueUsingCalls(const clang::Stmt* stmt, const KnownFunctions& known,
                     std::vector<const clang::CallExpr*>* calls) {
  SlicedCallFinder finder(known, calls);
  finder.TraverseStmt(const_cast<clang::Stmt*>(stmt));
}

void CollectUses(const clang::Stmt* stmt, const KnownFunctions& known, VarSet* uses) {
  if (stmt == nullptr) return;
  UseCollector collector(uses, known);
  collector.TraverseStmt(const_cast<clang::Stmt*>(stmt));
}

// The escaped variables a call may write beyond what its arguments point to, by the kind of
// function called.
struct CallReach {
  const VarSet& input_function;  // of the input, may write anything it can learn the address of
  const VarSet& library;         // not defined by the input, or one that only adds library calls
};

// Definitions, uses and calls of one statement.
class NodeBuilder : public FollowedArgumentsVisitor<NodeBuilder> {
 public:
  // `escaped`: the variables whose address escaped, which writes through pointers may reach.
  NodeBuilder(Node* node, const VarSet& escaped, CallReach reach, const VarSet& heap,
              const KnownFunctions& known, std::set<const clang::CallExpr*>* claimed)
      : FollowedArgumentsVisitor(known), node_(node), escaped_(escaped), reach_(reach),
        heap_(heap), claimed_(claimed) {}

  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (!op->isAssignmentOp()) return true;
    Write(op->getLHS(), /*whole=*/op->getOpcode() == clang::BO_Assign);
    return true;
  }
  bool VisitCompoundAssignOperator(clang::CompoundAssignOperator* op) {
    Write(op->getLHS(), false);
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) Write(op->getSubExpr(), false);
    return true;
  }
  bool VisitDeclStmt(clang::DeclStmt* decl) {
    for (clang::Decl* d : decl->decls()) {
      auto* var = dyn_cast<clang::VarDecl>(d);
      if (var != nullptr && var->hasInit()) node_->must_defs.insert(var);
    }
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (auto* var = dyn_cast<clang::VarDecl>(ref->getDecl())) node_->uses.insert(var);
    return true;
  }
  // A part of the statement that is a CFG element of its own (the CFG lists subexpressions
  // in the order they run) has its own node, with its definitions, calls and writes: here it
  // counts only as what it reads, which this statement's value depends on.
  bool TraverseStmt(clang::Stmt* stmt) {
    if (stmt != nullptr && stmt != node_->stmt && elements_ != nullptr && elements_->count(stmt)) {
      CollectUses(stmt, known_, &node_->uses);
      return true;
    }
    return FollowedArgumentsVisitor::TraverseStmt(stmt);
  }
  void set_elements(const std::set<const clang::Stmt*>* elements) { elements_ = elements; }
  bool TraverseUnaryExprOrTypeTraitExpr(clang::UnaryExprOrTypeTraitExpr*) { return true; }
  bool VisitCallExpr(clang::CallExpr* call) {
    const std::string name = CalleeName(call);
    const MpiCall* io = FindMpiIoCall(name);
    auto callee = known_.needs.find(name);
    // Only calls the helper makes are criteria: an MPI-IO query or a call with no prefetch
    // counterpart is no data access of the sequence (stagio.h); its results are cuts.
    const bool helper_call = io != nullptr && !io->prefetch.empty();
    if ((helper_call || callee != known_.needs.end()) && node_->criterion == nullptr &&
        claimed_->insert(call).second) {
      node_->criterion = call;
      node_->needed_arguments = io != nullptr ? io->needed : callee->second;
    }
    if ((io == nullptr && IsCommunication(name)) || (io != nullptr && !helper_call)) {
      node_->unavailable = name;
    }
    // Arguments through which the call stores what it reads from a file.
    std::vector<unsigned> data_arguments;
    if (io != nullptr && io->kind == CallKind::kRead) {
      for (unsigned index = 0; index < call->getNumArgs(); ++index) {
        if (!std::count(io->needed.begin(), io->needed.end(), index)) {
          data_arguments.push_back(index);
        }
      }
    }
    if (auto data = known_.file_data_parameters.find(name);
        io == nullptr && data != known_.file_data_parameters.end()) {
      data_arguments = data->second;
    }
    for (unsigned index : data_arguments) {
      if (index >= call->getNumArgs()) continue;
      VarSet written;
      MayWrite(call->getArg(index), &written);
      // A pointer the data goes through counts as written by the read too: a later p[i]
      // reads the file's data, which the helper never has.
      if (const clang::VarDecl* pointer = PointerBase(call->getArg(index))) {
        written.insert(pointer);
        node_->may_defs.insert(pointer);
      }
      node_->file_data.insert(written.begin(), written.end());
      node_->file_data_from = name;
    }
    // A call may write what its arguments point to, and every variable whose address escaped.
    const auto callee_writes = known_.parameter_writes.find(name);
    for (unsigned index = 0; index < call->getNumArgs(); ++index) {
      const clang::Expr* arg = call->getArg(index);
      // An input function that writes, through this argument, only fields no slice reads
      // defines nothing a slice needs.
      if (callee_writes != known_.parameter_writes.end()) {
        auto fields = callee_writes->second.find(index);
        bool matters = false;
        if (fields != callee_writes->second.end()) {
          for (const std::string& field : fields->second) {
            matters = matters || field.empty() || known_.fields_read.count(field) > 0;
          }
        }
        if (!matters) continue;
      }
      if (UnreadField(arg, known_)) continue;
      MayWrite(arg, &node_->may_defs);
      const clang::QualType type = arg->IgnoreParenImpCasts()->getType();
      if (type->isPointerType() && !type->getPointeeType().isConstQualified()) {
        NoteParameterWrite(arg, &node_->writes_through_parameters);
      }
    }
    // A call that may write more than its arguments: an input function may write every
    // exposed variable it can learn the address of (through pointers stored anywhere), or
    // only what a library may reach if that is all it does; a library function what it was
    // ever given.
    if (!WritesOnlyItsArguments(name) && !known_.write_only_arguments.count(name)) {
      // A call through a pointer may run any function of the input.
      const bool input_function = name.empty() || known_.stored_parameters.count(name) > 0;
      const bool like_library = !input_function || known_.library_bound.count(name) > 0;
      const VarSet& reach =
          like_library && !HandsOnUnknownCode(call) ? reach_.library : reach_.input_function;
      node_->may_defs.insert(reach.begin(), reach.end());
    }
    return true;
  }

 private:
  // A function handed to the call (qsort's comparator), or a pointer to one, that may write
  // more than its arguments: the call may run it.
  bool HandsOnUnknownCode(const clang::CallExpr* call) const {
    for (const clang::Expr* arg : call->arguments()) {
      const clang::Expr* bare = arg->IgnoreParenImpCasts();
      const clang::QualType type = bare->getType();
      const bool code = type->isFunctionType() || type->isFunctionPointerType();
      if (!code) continue;
      auto* ref = dyn_cast<clang::DeclRefExpr>(bare);
      auto* function = ref != nullptr ? dyn_cast<clang::FunctionDecl>(ref->getDecl()) : nullptr;
      const std::string named = function != nullptr ? function->getNameAsString() : "";
      if (named.empty() ||
          (!known_.write_only_arguments.count(named) && !WritesOnlyItsArguments(named))) {
        return true;
      }
    }
    return false;
  }

  void Write(const clang::Expr* lvalue, bool whole) {
    const clang::Expr* bare = lvalue->IgnoreParenImpCasts();
    if (UnreadField(bare, known_)) return;
    if (const clang::VarDecl* var = VarOf(bare)) {
      (whole ? node_->must_defs : node_->may_defs).insert(var);
      return;
    }
    if (const clang::VarDecl* var = BaseVar(bare)) {
      node_->may_defs.insert(var);
      return;
    }
    // Through a pointer: the pointer variable stands for what it points to (a later p[i]
    // reads it), and the write may reach every exposed variable, unless the pointer holds
    // only memory fresh from a call (then only globals).
    const clang::VarDecl* pointer = PointerBase(bare);
    if (pointer != nullptr) node_->may_defs.insert(pointer);
    // A pointer to fresh memory may still point where a function it came from keeps
    // pointers: what such functions may reach.
    for (const clang::VarDecl* var : escaped_) {
      if (pointer == nullptr || !heap_.count(pointer) || reach_.library.count(var)) {
        node_->may_defs.insert(var);
      }
    }
    NoteParameterWrite(bare, &node_->writes_through_parameters);
  }

  Node* node_;
  const VarSet& escaped_;
  const CallReach reach_;
  const VarSet& heap_;
  std::set<const clang::CallExpr*>* claimed_;
  const std::set<const clang::Stmt*>* elements_ = nullptr;
};


// Whether a call keeps no copy of its pointer argument `index` once it returns: MPI's and
// the common C library's calls, and input functions that do not store that parameter.
bool NonCapturing(const clang::CallExpr* call, unsigned index, const KnownFunctions& known) {
  const std::string name = CalleeName(call);
  if (name.empty()) return false;
  if (WritesOnlyItsArguments(name)) return true;
  auto stored = known.stored_parameters.find(name);
  return stored != known.stored_parameters.end() && !stored->second.count(index);
}


// Whether a value of this type holds a pointer (itself, or in an array or field).
bool HoldsPointers(clang::QualType type) {
  type = type.getCanonicalType();
  if (type->isPointerType()) return true;
  if (type->isArrayType()) {
    return HoldsPointers(clang::QualType(type->getArrayElementTypeNoTypeQual(), 0));
  }
  if (auto* record = type->getAsRecordDecl()) {
    for (const clang::FieldDecl* field : record->fields()) {
      if (HoldsPointers(field->getType())) return true;
    }
  }
  return false;
}

// Variables that code the slicer cannot see may reach and write: globals, and locals whose
// address (or an array's) is used otherwise than as an argument of a call that keeps no copy
// of it (stored in a pointer, a struct, returned, passed to an unknown function). Calls of
// unknown functions and writes through pointers may write these.
//
// Of those, the ones whose address went to a function the input does not define are the
// only locals such a function may write later (it cannot know the others' addresses), unless
// one of them holds pointers: then it may follow them anywhere.
class ExposureFinder : public clang::RecursiveASTVisitor<ExposureFinder> {
 public:
  ExposureFinder(VarSet* exposed, VarSet* to_calls, AddressHolders* holders,
                 const clang::ParentMap& parents, const KnownFunctions& known)
      : exposed_(exposed), to_calls_(to_calls), holders_(holders), parents_(parents),
        known_(known) {}
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->getOpcode() != clang::UO_AddrOf) return true;
    const clang::VarDecl* var = BaseVar(op->getSubExpr());
    if (var != nullptr && !PassedOnly(op)) Expose(var, op);
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    auto* var = dyn_cast<clang::VarDecl>(ref->getDecl());
    if (var == nullptr) return true;
    if (var->hasGlobalStorage()) {
      exposed_->insert(var);
    } else if (var->getType()->isArrayType() && HandsOutArray(ref)) {
      Expose(var, ref);
    }
    return true;
  }
  // An array field that decays (`g = s.a`) hands out an address inside its struct. (A field
  // of it, or its address, is seen where it is used.)
  bool VisitMemberExpr(clang::MemberExpr* member) {
    if (!member->getType()->isArrayType()) return true;
    const clang::VarDecl* var = BaseVar(member);
    if (var == nullptr) return true;
    const clang::Stmt* operand = nullptr;
    const clang::Stmt* use = UseOf(member, parents_, &operand);
    const bool within = use != nullptr && clang::isa<clang::MemberExpr>(use);
    auto* address = llvm::dyn_cast_or_null<clang::UnaryOperator>(use);
    const bool taken = address != nullptr && address->getOpcode() == clang::UO_AddrOf;
    if (!within && !taken && HandsOutArray(member)) Expose(var, member);
    return true;
  }

 private:
  // An array used other than indexed, measured or passed to a call that keeps no copy: it
  // decays to its address, which goes somewhere.
  bool HandsOutArray(const clang::Expr* array) const {
    const clang::Stmt* operand = nullptr;
    const clang::Stmt* use = UseOf(array, parents_, &operand);
    const bool indexed = use != nullptr && clang::isa<clang::ArraySubscriptExpr>(use);
    const bool measured = use != nullptr && clang::isa<clang::UnaryExprOrTypeTraitExpr>(use);
    return !indexed && !measured && !PassedOnly(array);
  }
  void Expose(const clang::VarDecl* var, const clang::Stmt* address) {
    exposed_->insert(var);
    holders_->Note(var, address);
    const clang::Stmt* operand = nullptr;
    auto* call = llvm::dyn_cast_or_null<clang::CallExpr>(UseOf(address, parents_, &operand));
    // To a call that may keep it: a library, or a function of the input that may hand it to
    // one.
    if (call != nullptr) to_calls_->insert(var);
  }
  bool PassedOnly(const clang::Stmt* address) const {
    const clang::Stmt* operand = nullptr;
    auto* call = llvm::dyn_cast_or_null<clang::CallExpr>(UseOf(address, parents_, &operand));
    if (call == nullptr) return false;
    const int index = ArgumentIndex(call, operand);
    return index >= 0 && NonCapturing(call, static_cast<unsigned>(index), known_);
  }

  VarSet* exposed_;
  VarSet* to_calls_;
  AddressHolders* holders_;
  const clang::ParentMap& parents_;
  const KnownFunctions& known_;
};


// Local pointers that only ever hold what a call returned, from arguments that are no
// pointers (p = malloc(n), p = bench_alloc(n)), or null: they point to memory no variable of
// the function is, unless a global (such a call can reach no local). A pointer whose own
// address is exposed is not one.
class FreshPointerFinder : public clang::RecursiveASTVisitor<FreshPointerFinder> {
 public:
  std::map<const clang::VarDecl*, bool> fresh;  // false once some definition is not

  bool VisitVarDecl(clang::VarDecl* var) {
    if (!var->getType()->isPointerType() || var->hasGlobalStorage() ||
        clang::isa<clang::ParmVarDecl>(var)) {
      return true;
    }
    Define(var, var->getInit());
    return true;
  }
  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->getOpcode() != clang::BO_Assign) return true;
    if (const clang::VarDecl* var = VarOf(op->getLHS())) Define(var, op->getRHS());
    return true;
  }
  // A pointer whose address is taken may be set by whoever gets the address.
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->getOpcode() != clang::UO_AddrOf) return true;
    if (const clang::VarDecl* var = VarOf(op->getSubExpr())) fresh[var] = false;
    return true;
  }

 private:
  void Define(const clang::VarDecl* var, const clang::Expr* value) {
    bool ok = false;
    if (value != nullptr) {
      const clang::Expr* bare = value->IgnoreParenCasts();
      if (auto* call = dyn_cast<clang::CallExpr>(bare)) {
        ok = call->getDirectCallee() != nullptr;
        for (const clang::Expr* arg : call->arguments()) {
          const clang::QualType type = arg->IgnoreParenImpCasts()->getType();
          ok = ok && !type->isPointerType() && !type->isArrayType();
        }
      } else if (auto* literal = dyn_cast<clang::IntegerLiteral>(bare)) {
        ok = literal->getValue() == 0;
      }
    }
    auto [it, inserted] = fresh.emplace(var, ok);
    if (!inserted) it->second = it->second && ok;
  }
};

VarSet FreshMemoryPointers(const clang::Stmt* body, const VarSet& exposed) {
  FreshPointerFinder finder;
  finder.TraverseStmt(const_cast<clang::Stmt*>(body));
  VarSet heap;
  for (const auto& [var, fresh] : finder.fresh) {
    if (fresh && !exposed.count(var)) heap.insert(var);
  }
  return heap;
}


}  // namespace

bool SliceFunction(const clang::FunctionDecl& function, clang::ASTContext& context,
                   const KnownFunctions& known, FunctionSlice* slice) {
  clang::Stmt* body = function.getBody();
  if (body == nullptr) return false;
  clang::CFG::BuildOptions options;
  std::unique_ptr<clang::CFG> cfg =
      clang::CFG::buildCFG(&function, body, &context, options);
  if (!cfg) return false;
  VarSet escaped, to_calls;
  clang::ParentMap parents(body);
  AddressHolders holders(body, parents);
  ExposureFinder(&escaped, &to_calls, &holders, parents, known).TraverseStmt(body);
  // What a called function may learn the address of: not a local sealed in holders.
  const VarSet sealed = holders.Sealed();
  VarSet call_reach;
  for (const clang::VarDecl* var : escaped) {
    if (!sealed.count(var)) call_reach.insert(var);
  }
  // What a library may write: what was handed to a call that may keep it (to a library, or to
  // a function of the input that may pass it on to one), and globals; all of call_reach if
  // what was handed holds pointers (the library may follow them).
  VarSet library_reach;
  bool follows_pointers = false;
  for (const clang::VarDecl* var : to_calls) {
    follows_pointers = follows_pointers || HoldsPointers(var->getType());
  }
  for (const clang::VarDecl* var : call_reach) {
    if (follows_pointers || var->hasGlobalStorage() || to_calls.count(var)) {
      library_reach.insert(var);
    }
  }
  const VarSet heap = FreshMemoryPointers(body, escaped);

  // 1. Nodes, block by block: the elements, then the branch condition.
  std::vector<Node> nodes;
  std::map<const clang::CFGBlock*, std::pair<size_t, size_t>> block_nodes;  // [first, end)
  std::map<const clang::CFGBlock*, size_t> condition_node;
  std::set<const clang::CallExpr*> claimed;
  std::set<const clang::Stmt*> elements;
  for (const clang::CFGBlock* block : *cfg) {
    for (const clang::CFGElement& element : *block) {
      if (auto statement = element.getAs<clang::CFGStmt>()) elements.insert(statement->getStmt());
    }
  }
  for (const clang::CFGBlock* block : *cfg) {
    const size_t first = nodes.size();
    for (const clang::CFGElement& element : *block) {
      auto statement = element.getAs<clang::CFGStmt>();
      if (!statement) continue;
      Node node;
      node.stmt = statement->getStmt();
      node.block = block;
      node.jump = clang::isa<clang::ReturnStmt>(node.stmt);
      NodeBuilder builder(&node, escaped, {call_reach, library_reach}, heap, known, &claimed);
      builder.set_elements(&elements);
      builder.TraverseStmt(const_cast<clang::Stmt*>(node.stmt));
      nodes.push_back(std::move(node));
    }
    const clang::Stmt* terminator = block->getTerminatorStmt();
    if (terminator != nullptr && (clang::isa<clang::BreakStmt>(terminator) ||
                                  clang::isa<clang::ContinueStmt>(terminator) ||
                                  clang::isa<clang::GotoStmt>(terminator))) {
      Node node;
      node.stmt = terminator;
      node.block = block;
      node.jump = true;
      nodes.push_back(std::move(node));
    }
    if (const clang::Stmt* condition = block->getTerminatorCondition()) {
      Node node;
      node.stmt = block->getTerminatorStmt();
      node.block = block;
      CollectUses(condition, known, &node.uses);
      condition_node[block] = nodes.size();
      nodes.push_back(std::move(node));
    }
    block_nodes[block] = {first, nodes.size()};
  }
  bool any_criterion = false;
  for (const Node& node : nodes) any_criterion = any_criterion || node.criterion != nullptr;
  if (!any_criterion) return false;

  // 2. Reaching definitions. A definition is one node's write of one variable: a node that
  // may write several variables (a call) is several definitions, and a later whole write of
  // one of them kills only that one.
  struct Definition {
    size_t node;
    const clang::VarDecl* var;
  };
  std::vector<Definition> definitions;
  std::vector<std::vector<size_t>> definitions_of_node(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    VarSet written = nodes[n].must_defs;
    written.insert(nodes[n].may_defs.begin(), nodes[n].may_defs.end());
    for (const clang::VarDecl* var : written) {
      definitions_of_node[n].push_back(definitions.size());
      definitions.push_back({n, var});
    }
  }
  const size_t count = definitions.size();
  std::map<const clang::VarDecl*, llvm::BitVector> defs_of;
  for (size_t d = 0; d < count; ++d) {
    llvm::BitVector& defs = defs_of[definitions[d].var];
    defs.resize(count);
    defs.set(d);
  }
  std::map<const clang::CFGBlock*, llvm::BitVector> block_out;
  std::vector<llvm::BitVector> reaching(nodes.size(), llvm::BitVector(count));
  for (bool changed = true; changed;) {
    changed = false;
    for (const clang::CFGBlock* block : *cfg) {
      llvm::BitVector current(count);
      for (const clang::CFGBlock* pred : block->preds()) {
        if (pred != nullptr && block_out.count(pred)) current |= block_out[pred];
      }
      const auto [first, end] = block_nodes[block];
      for (size_t n = first; n < end; ++n) {
        reaching[n] = current;
        for (const clang::VarDecl* var : nodes[n].must_defs) current.reset(defs_of[var]);
        for (size_t d : definitions_of_node[n]) current.set(d);
      }
      llvm::BitVector& out = block_out[block];
      if (out.size() != count || out != current) {
        out = current;
        changed = true;
      }
    }
  }

  // 3. The slice: from the criteria back over data and control dependences.
  clang::ControlDependencyCalculator control(cfg.get());
  // The CFG splits `int a = 1, b = 2;` into one DeclStmt per variable that the AST does not
  // hold; the slice names the statement the source has.
  std::map<const clang::Stmt*, const clang::Stmt*> synthetic;
  for (const auto& [made, source] : cfg->synthetic_stmts()) synthetic[made] = source;
  auto original = [&](const clang::Stmt* stmt) {
    auto it = synthetic.find(stmt);
    return it != synthetic.end() ? it->second : stmt;
  };
  const clang::SourceManager& sources = context.getSourceManager();
  auto line_of = [&](const clang::Stmt* stmt) {
    return sources.getExpansionLineNumber(stmt->getBeginLoc());
  };
  std::map<size_t, std::string> in_slice;
  std::vector<size_t> work;
  auto add = [&](size_t n, std::string why) {
    if (in_slice.emplace(n, std::move(why)).second) work.push_back(n);
  };
  const auto out_needs = known.out_needs.find(function.getNameAsString());
  const bool returns_needed = known.returns_needed.count(function.getNameAsString()) > 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].criterion != nullptr) add(n, "criterion " + CalleeName(nodes[n].criterion));

    if (out_needs == known.out_needs.end()) continue;
    // Only writes of fields some slice reads (or of the whole object) are needed: a field
    // no slice reads (a counter, a timing) does not change what the helper does.
    for (const auto& [index, fields] : nodes[n].writes_through_parameters) {
      if (!out_needs->second.count(index)) continue;
      bool read = false;
      for (const std::string& field : fields) {
        read = read || field.empty() || known.fields_read.count(field) > 0;
      }
      if (read) {
        add(n, "writes through parameter " + std::to_string(index + 1) +
                   ", which a caller's slice reads after the call");
      }
    }
  }
  auto drain = [&]() {
    while (!work.empty()) {
      const size_t n = work.back();
      work.pop_back();
      const Node& node = nodes[n];
      // A criterion needs only the arguments the helper's call takes (not the buffer or status).
      VarSet uses = node.uses;
      if (node.criterion != nullptr) {
        uses.clear();
        for (unsigned index : node.needed_arguments) {
          if (index < node.criterion->getNumArgs()) {
            CollectUses(node.criterion->getArg(index), known, &uses);
          }
        }
      }
      for (const clang::VarDecl* var : uses) {
        auto defs = defs_of.find(var);
        if (defs == defs_of.end()) continue;
        llvm::BitVector reaching_defs = reaching[n];
        reaching_defs &= defs->second;
        for (unsigned definition : reaching_defs.set_bits()) {
          const size_t d = definitions[definition].node;
          if (!nodes[d].unavailable.empty() || nodes[d].file_data.count(var)) {
            const std::string call = !nodes[d].unavailable.empty()
                                         ? nodes[d].unavailable
                                         : nodes[d].file_data_from + " (the data it reads)";
            slice->cuts.push_back({line_of(nodes[d].stmt), call, var->getNameAsString(),
                                   original(nodes[d].stmt)});
            continue;
          }
          add(d, "data: " + var->getNameAsString() + " (used on line " +
                     std::to_string(line_of(node.stmt)) + ")");
          // A value an input function writes through a pointer argument: its slice must
          // compute it too.
          if (const clang::CallExpr* call = nodes[d].criterion;
              call != nullptr && known.needs.count(CalleeName(call))) {
            for (unsigned index = 0; index < call->getNumArgs(); ++index) {
              VarSet written;
              MayWrite(call->getArg(index), &written);
              if (written.count(var)) slice->callee_out_needs[CalleeName(call)].insert(index);
            }
          }
        }
      }
      for (const clang::CFGBlock* dependence :
           control.getControlDependencies(const_cast<clang::CFGBlock*>(node.block))) {
        auto condition = condition_node.find(dependence);
        if (condition == condition_node.end()) continue;
        add(condition->second, "control: decides whether line " +
                                   std::to_string(line_of(node.stmt)) + " runs");
      }
    }
  };
  drain();

  // 4. Jumps. A break, continue, goto or return changes which of the slice's statements run
  // next when the conditions that lead to it are the slice's: keep it when every condition
  // its block depends on is in the slice (one that runs whatever the slice decides is left
  // out), and, for a return, when some of the slice's lines come after it (a return at the
  // end skips nothing of the slice). The jump's own conditions are in the slice already: the
  // statements it skips depend on them. (Coarser than Agrawal's rule, and never smaller.)
  unsigned last_line = 0;
  for (const auto& [n, why] : in_slice) last_line = std::max(last_line, line_of(nodes[n].stmt));
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (!nodes[n].jump || in_slice.count(n)) continue;
    if (clang::isa<clang::ReturnStmt>(nodes[n].stmt) && line_of(nodes[n].stmt) >= last_line) {
      continue;
    }
    const auto dependences =
        control.getControlDependencies(const_cast<clang::CFGBlock*>(nodes[n].block));
    bool decided_by_slice = !dependences.empty();
    for (const clang::CFGBlock* dependence : dependences) {
      auto condition = condition_node.find(dependence);
      decided_by_slice = decided_by_slice && condition != condition_node.end() &&
                         in_slice.count(condition->second) > 0;
    }
    if (decided_by_slice) add(n, "jump: changes which of the slice's lines run");
  }
  // What a kept jump reads (a return's value, or what decides it) is the slice's too.
  drain();

  // The returns, when a caller's slice uses the value: unless computing it needs a value the
  // helper cannot have (the count a read returns), then the value itself is one, for the
  // callers (returns_unavailable), and the slice stays as it was.
  if (returns_needed) {
    const auto kept = in_slice;
    const size_t cuts_before = slice->cuts.size();
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (clang::isa<clang::ReturnStmt>(nodes[n].stmt)) {
        add(n, "return: a caller's slice uses the value");
      }
    }
    drain();
    if (slice->cuts.size() != cuts_before) {
      in_slice = kept;
      work.clear();
      slice->cuts.resize(cuts_before);
      slice->returns_unavailable = true;
    }
  }

  // Calls of input functions whose value a statement of the slice uses (`if (f(...) != 0)`,
  // `x = f(...)`): those functions' returns are their slices' too.
  for (const auto& [n, why] : in_slice) {
    std::vector<const clang::CallExpr*> calls;
    // A branch's node stands for its condition, not the statement it heads.
    const clang::Stmt* what = nodes[n].stmt;
    if (what == nodes[n].block->getTerminatorStmt() && nodes[n].block->getTerminatorCondition()) {
      what = nodes[n].block->getTerminatorCondition();
    }
    ValueUsingCalls(what, known, &calls);
    for (const clang::CallExpr* call : calls) {
      if (call == nodes[n].stmt) continue;
      const std::string name = CalleeName(call);
      if (known.returns_unavailable.count(name)) {
        slice->cuts.push_back({line_of(nodes[n].stmt), "the value " + name + " returns", name,
                               original(nodes[n].stmt)});
      } else {
        slice->callee_returns_needed.insert(name);
      }
    }
  }

  // 5. The parameters the slice reads: its callers must supply them.
  for (const auto& [n, why] : in_slice) {
    VarSet uses = nodes[n].uses;
    if (nodes[n].criterion != nullptr) {
      uses.clear();
      for (unsigned index : nodes[n].needed_arguments) {
        if (index < nodes[n].criterion->getNumArgs()) {
          CollectUses(nodes[n].criterion->getArg(index), known, &uses);
        }
      }
    }
    for (const clang::VarDecl* var : uses) {
      if (auto* parameter = dyn_cast<clang::ParmVarDecl>(var)) {
        slice->needed_parameters.push_back(parameter->getFunctionScopeIndex());
      }
    }
  }
  std::sort(slice->needed_parameters.begin(), slice->needed_parameters.end());
  slice->needed_parameters.erase(
      std::unique(slice->needed_parameters.begin(), slice->needed_parameters.end()),
      slice->needed_parameters.end());

  slice->function = function.getNameAsString();
  slice->decl = &function;
  for (const auto& [n, why] : in_slice) {
    const Node& node = nodes[n];
    FieldCollector fields(&slice->fields_read, known);
    if (node.criterion != nullptr) {
      fields.TraverseStmt(const_cast<clang::CallExpr*>(node.criterion));
    } else if (node.stmt == node.block->getTerminatorStmt() && node.block->getTerminatorCondition()) {
      fields.TraverseStmt(const_cast<clang::Stmt*>(node.block->getTerminatorCondition()));
    } else {
      fields.TraverseStmt(const_cast<clang::Stmt*>(node.stmt));
    }
  }
  // The parameters through which file data leaves the function (a read into *p, p->f, p[i]).
  for (const Node& node : nodes) {
    for (const clang::VarDecl* var : node.file_data) {
      if (auto* parameter = dyn_cast<clang::ParmVarDecl>(var)) {
        slice->file_data_parameters.push_back(parameter->getFunctionScopeIndex());
      }
    }
  }
  std::sort(slice->file_data_parameters.begin(), slice->file_data_parameters.end());
  slice->file_data_parameters.erase(
      std::unique(slice->file_data_parameters.begin(), slice->file_data_parameters.end()),
      slice->file_data_parameters.end());
  for (const auto& [n, why] : in_slice) slice->statements.insert(original(nodes[n].stmt));
  std::map<unsigned, std::string> by_line;
  for (const auto& [n, why] : in_slice) by_line.emplace(line_of(nodes[n].stmt), why);
  for (const auto& [line, why] : by_line) slice->lines.push_back({line, why});
  std::sort(slice->cuts.begin(), slice->cuts.end(), [](const SliceCut& a, const SliceCut& b) {
    return std::tie(a.line, a.variable) < std::tie(b.line, b.variable);
  });
  slice->cuts.erase(std::unique(slice->cuts.begin(), slice->cuts.end(),
                                [](const SliceCut& a, const SliceCut& b) {
                                  return a.line == b.line && a.variable == b.variable;
                                }),
                    slice->cuts.end());
  return true;
}

}  // namespace slice
}  // namespace stagio
