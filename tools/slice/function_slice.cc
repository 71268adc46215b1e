#include "function_slice.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Analysis/Analyses/Dominators.h"
#include "clang/Analysis/CFG.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/BitVector.h"
#include "mpi_calls.h"

namespace stagio {
namespace slice {
namespace {

using clang::dyn_cast;
using VarSet = std::set<const clang::VarDecl*>;

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
  std::string communication;                // an MPI call that communicates, if it makes one
};

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
                                        "labs", "sqrt", "exit", "abort"};
  for (const char* known : library) {
    if (name == known) return true;
  }
  return false;
}

std::string CalleeName(const clang::CallExpr* call) {
  const clang::FunctionDecl* callee = call->getDirectCallee();
  return callee != nullptr ? callee->getNameAsString() : std::string();
}

// Reads every variable under `stmt` into `uses`, skipping the subtrees in `skip`.
class UseCollector : public clang::RecursiveASTVisitor<UseCollector> {
 public:
  explicit UseCollector(VarSet* uses) : uses_(uses) {}
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    if (auto* var = dyn_cast<clang::VarDecl>(ref->getDecl())) uses_->insert(var);
    return true;
  }

 private:
  VarSet* uses_;
};

void CollectUses(const clang::Stmt* stmt, VarSet* uses) {
  if (stmt == nullptr) return;
  UseCollector collector(uses);
  collector.TraverseStmt(const_cast<clang::Stmt*>(stmt));
}

// Definitions, uses and calls of one statement.
class NodeBuilder : public clang::RecursiveASTVisitor<NodeBuilder> {
 public:
  NodeBuilder(Node* node, const VarSet& escaped, const KnownFunctions& known,
              std::set<const clang::CallExpr*>* claimed)
      : node_(node), escaped_(escaped), known_(known), claimed_(claimed) {}

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
  bool VisitCallExpr(clang::CallExpr* call) {
    const std::string name = CalleeName(call);
    const MpiCall* io = FindMpiIoCall(name);
    auto callee = known_.needs.find(name);
    if ((io != nullptr || callee != known_.needs.end()) && node_->criterion == nullptr &&
        claimed_->insert(call).second) {
      node_->criterion = call;
      node_->needed_arguments = io != nullptr ? io->needed : callee->second;
    }
    if (io == nullptr && IsCommunication(name)) node_->communication = name;
    // A call may write what its arguments point to, and every variable whose address escaped.
    for (const clang::Expr* arg : call->arguments()) {
      const clang::Expr* bare = arg->IgnoreParenImpCasts();
      if (auto* address = dyn_cast<clang::UnaryOperator>(bare);
          address != nullptr && address->getOpcode() == clang::UO_AddrOf) {
        if (const clang::VarDecl* var = BaseVar(address->getSubExpr())) {
          node_->may_defs.insert(var);
        }
      } else if (const clang::VarDecl* var = VarOf(bare);
                 var != nullptr && var->getType()->isArrayType()) {
        node_->may_defs.insert(var);
      }
    }
    if (!WritesOnlyItsArguments(name) && !known_.write_only_arguments.count(name)) {
      node_->may_defs.insert(escaped_.begin(), escaped_.end());
    }
    return true;
  }

 private:
  void Write(const clang::Expr* lvalue, bool whole) {
    const clang::Expr* bare = lvalue->IgnoreParenImpCasts();
    if (const clang::VarDecl* var = VarOf(bare)) {
      (whole ? node_->must_defs : node_->may_defs).insert(var);
      return;
    }
    if (const clang::VarDecl* var = BaseVar(bare)) {
      node_->may_defs.insert(var);
      return;
    }
    node_->may_defs.insert(escaped_.begin(), escaped_.end());  // through a pointer
  }

  Node* node_;
  const VarSet& escaped_;
  const KnownFunctions& known_;
  std::set<const clang::CallExpr*>* claimed_;
};

// Variables whose address is taken, arrays, and globals: what calls and writes through
// pointers may change.
class EscapeFinder : public clang::RecursiveASTVisitor<EscapeFinder> {
 public:
  explicit EscapeFinder(VarSet* escaped) : escaped_(escaped) {}
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->getOpcode() == clang::UO_AddrOf) {
      if (const clang::VarDecl* var = BaseVar(op->getSubExpr())) escaped_->insert(var);
    }
    return true;
  }
  bool VisitDeclRefExpr(clang::DeclRefExpr* ref) {
    auto* var = dyn_cast<clang::VarDecl>(ref->getDecl());
    if (var != nullptr && (var->hasGlobalStorage() || var->getType()->isArrayType())) {
      escaped_->insert(var);
    }
    return true;
  }

 private:
  VarSet* escaped_;
};

}  // namespace

namespace {

// Whether a function body writes a global variable, and the functions it calls.
class SideEffectFinder : public clang::RecursiveASTVisitor<SideEffectFinder> {
 public:
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
    callees.insert(name.empty() ? std::string("(through a pointer)") : name);
    return true;
  }

 private:
  void Written(const clang::Expr* lvalue) {
    const clang::VarDecl* var = BaseVar(lvalue);
    if (var != nullptr && var->hasGlobalStorage()) writes_global = true;
  }
};

}  // namespace

std::set<std::string> FunctionsWritingOnlyArguments(
    const std::vector<const clang::FunctionDecl*>& functions) {
  std::map<std::string, SideEffectFinder> effects;
  for (const clang::FunctionDecl* function : functions) {
    SideEffectFinder& finder = effects[function->getNameAsString()];
    finder.TraverseStmt(function->getBody());
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
        calls_unknown = calls_unknown ||
                        (!WritesOnlyItsArguments(callee) && !contained.count(callee));
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

bool SliceFunction(const clang::FunctionDecl& function, clang::ASTContext& context,
                   const KnownFunctions& known, FunctionSlice* slice) {
  clang::Stmt* body = function.getBody();
  if (body == nullptr) return false;
  clang::CFG::BuildOptions options;
  std::unique_ptr<clang::CFG> cfg =
      clang::CFG::buildCFG(&function, body, &context, options);
  if (!cfg) return false;
  VarSet escaped;
  EscapeFinder(&escaped).TraverseStmt(body);

  // 1. Nodes, block by block: the elements, then the branch condition.
  std::vector<Node> nodes;
  std::map<const clang::CFGBlock*, std::pair<size_t, size_t>> block_nodes;  // [first, end)
  std::map<const clang::CFGBlock*, size_t> condition_node;
  std::set<const clang::CallExpr*> claimed;
  for (const clang::CFGBlock* block : *cfg) {
    const size_t first = nodes.size();
    for (const clang::CFGElement& element : *block) {
      auto statement = element.getAs<clang::CFGStmt>();
      if (!statement) continue;
      Node node;
      node.stmt = statement->getStmt();
      node.block = block;
      node.jump = clang::isa<clang::ReturnStmt>(node.stmt);
      NodeBuilder(&node, escaped, known, &claimed).TraverseStmt(const_cast<clang::Stmt*>(node.stmt));
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
      CollectUses(condition, &node.uses);
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
  const clang::SourceManager& sources = context.getSourceManager();
  auto line_of = [&](const clang::Stmt* stmt) {
    return sources.getExpansionLineNumber(stmt->getBeginLoc());
  };
  std::map<size_t, std::string> in_slice;
  std::vector<size_t> work;
  auto add = [&](size_t n, std::string why) {
    if (in_slice.emplace(n, std::move(why)).second) work.push_back(n);
  };
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].criterion != nullptr) add(n, "criterion " + CalleeName(nodes[n].criterion));
  }
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
          CollectUses(node.criterion->getArg(index), &uses);
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
        if (!nodes[d].communication.empty()) {
          slice->cuts.push_back({line_of(nodes[d].stmt), nodes[d].communication,
                                 var->getNameAsString()});
          continue;
        }
        add(d, "data: " + var->getNameAsString() + " (used on line " +
                   std::to_string(line_of(node.stmt)) + ")");
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
    if (decided_by_slice) in_slice.emplace(n, "jump: changes which of the slice's lines run");
  }

  // 5. The parameters the slice reads: its callers must supply them.
  for (const auto& [n, why] : in_slice) {
    VarSet uses = nodes[n].uses;
    if (nodes[n].criterion != nullptr) {
      uses.clear();
      for (unsigned index : nodes[n].needed_arguments) {
        if (index < nodes[n].criterion->getNumArgs()) {
          CollectUses(nodes[n].criterion->getArg(index), &uses);
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
  std::map<unsigned, std::string> by_line;
  for (const auto& [n, why] : in_slice) by_line.emplace(line_of(nodes[n].stmt), why);
  for (const auto& [line, why] : by_line) slice->lines.push_back({line, why});
  std::sort(slice->cuts.begin(), slice->cuts.end(),
            [](const SliceCut& a, const SliceCut& b) { return a.line < b.line; });
  slice->cuts.erase(std::unique(slice->cuts.begin(), slice->cuts.end(),
                                [](const SliceCut& a, const SliceCut& b) {
                                  return a.line == b.line && a.variable == b.variable;
                                }),
                    slice->cuts.end());
  return true;
}

}  // namespace slice
}  // namespace stagio
