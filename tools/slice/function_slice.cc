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
  const clang::CallExpr* mpi_io = nullptr;  // the MPI-IO call this statement makes
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
  NodeBuilder(Node* node, const VarSet& escaped, std::set<const clang::CallExpr*>* claimed)
      : node_(node), escaped_(escaped), claimed_(claimed) {}

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
    if (io != nullptr && node_->mpi_io == nullptr && claimed_->insert(call).second) {
      node_->mpi_io = call;
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
    if (!WritesOnlyItsArguments(name)) node_->may_defs.insert(escaped_.begin(), escaped_.end());
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

bool SliceFunction(const clang::FunctionDecl& function, clang::ASTContext& context,
                   FunctionSlice* slice) {
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
      NodeBuilder(&node, escaped, &claimed).TraverseStmt(const_cast<clang::Stmt*>(node.stmt));
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
  for (const Node& node : nodes) any_criterion = any_criterion || node.mpi_io != nullptr;
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
    if (nodes[n].mpi_io != nullptr) add(n, "criterion " + CalleeName(nodes[n].mpi_io));
  }
  while (!work.empty()) {
    const size_t n = work.back();
    work.pop_back();
    const Node& node = nodes[n];
    // A criterion needs only the arguments the helper's call takes (not the buffer or status).
    VarSet uses = node.uses;
    if (node.mpi_io != nullptr) {
      uses.clear();
      const MpiCall* io = FindMpiIoCall(CalleeName(node.mpi_io));
      for (unsigned index : io->needed) {
        if (index < node.mpi_io->getNumArgs()) CollectUses(node.mpi_io->getArg(index), &uses);
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
