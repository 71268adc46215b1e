#include "statement_outline.h"

#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/raw_ostream.h"

namespace stagio {
namespace slice {

using clang::dyn_cast;
using clang::isa;

StatementOutline::StatementOutline(const clang::FunctionDecl& function,
                                   const std::set<const clang::Stmt*>& slice_statements)
    : parents_(function.getBody()), slice_(slice_statements) {
  for (const clang::Stmt* stmt : slice_statements) {
    const clang::Stmt* statement = StatementOf(stmt);
    if (statement != nullptr) kept_.insert(statement);
  }
  std::vector<const clang::Stmt*> roots(kept_.begin(), kept_.end());
  // A kept goto needs its label printed: the label's statements are part of the outline.
  for (const clang::Stmt* stmt : kept_) {
    if (auto* jump = dyn_cast<clang::GotoStmt>(stmt)) roots.push_back(jump->getLabel()->getStmt());
  }
  for (const clang::Stmt* stmt : roots) {
    for (const clang::Stmt* at = stmt; at != nullptr; at = parents_.getParent(at)) {
      if (!relevant_.insert(at).second) break;
    }
  }
}

void StatementOutline::SliceParts(const clang::Stmt* stmt,
                                  std::vector<const clang::Stmt*>* parts) const {
  if (stmt == nullptr) return;
  if (InSlice(stmt)) {
    parts->push_back(stmt);
    return;
  }
  for (const clang::Stmt* child : stmt->children()) SliceParts(child, parts);
}

const clang::Stmt* StatementOutline::StatementOf(const clang::Stmt* stmt) const {
  const clang::Stmt* at = stmt;
  for (;;) {
    const clang::Stmt* parent = parents_.getParent(at);
    if (parent == nullptr || isa<clang::CompoundStmt>(parent)) return at;
    if (auto* branch = dyn_cast<clang::IfStmt>(parent)) {
      if (at == branch->getThen() || at == branch->getElse()) return at;
      return parent;
    }
    if (auto* loop = dyn_cast<clang::ForStmt>(parent)) {
      // The initialization runs once, before the loop: it is a statement of its own, and the
      // loop is kept only when its condition is.
      if (at == loop->getBody() || at == loop->getInit()) return at;
      return parent;
    }
    if (auto* loop = dyn_cast<clang::WhileStmt>(parent)) {
      return at == loop->getBody() ? at : parent;
    }
    if (auto* loop = dyn_cast<clang::DoStmt>(parent)) return at == loop->getBody() ? at : parent;
    if (auto* choice = dyn_cast<clang::SwitchStmt>(parent)) {
      return at == choice->getBody() ? at : parent;
    }
    if (isa<clang::SwitchCase>(parent) || isa<clang::LabelStmt>(parent)) return at;
    at = parent;
  }
}

void OutlinePrinter::Emitted(const clang::Stmt* stmt) {
  if (stmt != nullptr && emitted_) emitted_(stmt);
}

std::string OutlinePrinter::Between(clang::SourceLocation begin, clang::SourceLocation end) {
  if (scratch_ == nullptr) return "";
  const clang::SourceManager& sources = context_.getSourceManager();
  return scratch_->getRewrittenText(clang::CharSourceRange::getCharRange(
      sources.getExpansionLoc(begin), sources.getExpansionLoc(end)));
}

std::string OutlinePrinter::Text(const clang::Stmt* stmt) {
  if (scratch_ == nullptr) return "";
  const clang::SourceManager& sources = context_.getSourceManager();
  return scratch_->getRewrittenText(sources.getExpansionRange(stmt->getSourceRange()));
}

std::string OutlinePrinter::Child(const clang::Stmt* stmt) {
  if (outline_.Relevant(stmt)) return Statement(stmt);
  if (auto* label = dyn_cast<clang::LabelStmt>(stmt)) {
    return Between(label->getBeginLoc(), label->getSubStmt()->getBeginLoc()) + ";\n";
  }
  if (auto* label = dyn_cast<clang::SwitchCase>(stmt)) {
    return Between(label->getBeginLoc(), label->getSubStmt()->getBeginLoc()) + ";\n";
  }
  std::string out;
  if (auto* declarations = dyn_cast<clang::DeclStmt>(stmt)) {
    for (const clang::Decl* decl : declarations->decls()) {
      auto* var = dyn_cast<clang::VarDecl>(decl);
      if (var != nullptr && referenced_.count(var)) {
        out += Declaration(var->getType(), var->getNameAsString(), context_) + ";\n";
      }
    }
  }
  return out;
}

std::string OutlinePrinter::Body(const clang::Stmt* stmt) {
  if (stmt == nullptr) return ";\n";
  if (isa<clang::CompoundStmt>(stmt)) return Statement(stmt);
  if (!outline_.Relevant(stmt)) return "{}\n";
  return "{\n" + Statement(stmt) + "}\n";
}

std::string OutlinePrinter::Statement(const clang::Stmt* stmt) {
  if (auto* block = dyn_cast<clang::CompoundStmt>(stmt)) {
    std::string out = "{\n";
    for (const clang::Stmt* child : block->body()) out += Child(child);
    return out + "}\n";
  }
  if (auto* branch = dyn_cast<clang::IfStmt>(stmt)) {
    Emitted(branch->getCond());
    std::string out = Between(branch->getBeginLoc(), branch->getThen()->getBeginLoc()) +
                      Body(branch->getThen());
    if (branch->getElse() != nullptr && outline_.Relevant(branch->getElse())) {
      out += "else " + Body(branch->getElse());
    }
    return out;
  }
  if (auto* loop = dyn_cast<clang::ForStmt>(stmt)) {
    if (!outline_.Kept(loop)) {
      // Only the initialization is needed: it runs once, without the loop.
      return loop->getInit() != nullptr && outline_.Kept(loop->getInit()) ? Leaf(loop->getInit())
                                                                           : "";
    }
    Emitted(loop->getInit());
    Emitted(loop->getCond());
    Emitted(loop->getInc());
    return Between(loop->getBeginLoc(), loop->getBody()->getBeginLoc()) + Body(loop->getBody());
  }
  if (auto* loop = dyn_cast<clang::WhileStmt>(stmt)) {
    Emitted(loop->getCond());
    return Between(loop->getBeginLoc(), loop->getBody()->getBeginLoc()) + Body(loop->getBody());
  }
  if (auto* loop = dyn_cast<clang::DoStmt>(stmt)) {
    Emitted(loop->getCond());
    return "do " + Body(loop->getBody()) + "while (" + Text(loop->getCond()) + ");\n";
  }
  if (auto* choice = dyn_cast<clang::SwitchStmt>(stmt)) {
    Emitted(choice->getCond());
    return Between(choice->getBeginLoc(), choice->getBody()->getBeginLoc()) +
           Body(choice->getBody());
  }
  if (auto* label = dyn_cast<clang::LabelStmt>(stmt)) {
    return Between(label->getBeginLoc(), label->getSubStmt()->getBeginLoc()) +
           (outline_.Relevant(label->getSubStmt()) ? Statement(label->getSubStmt()) : ";\n");
  }
  if (auto* label = dyn_cast<clang::SwitchCase>(stmt)) {
    return Between(label->getBeginLoc(), label->getSubStmt()->getBeginLoc()) +
           (outline_.Relevant(label->getSubStmt()) ? Statement(label->getSubStmt()) : ";\n");
  }
  return outline_.Kept(stmt) ? Leaf(stmt) : "";
}

std::string OutlinePrinter::Leaf(const clang::Stmt* stmt) {
  // The helper is a function of its own: main's return ends the helper, not the program.
  if (root_ && isa<clang::ReturnStmt>(stmt) && outline_.InSlice(stmt)) return "return;\n";
  if (!outline_.InSlice(stmt) && !isa<clang::BreakStmt>(stmt) && !isa<clang::ContinueStmt>(stmt) &&
      !isa<clang::GotoStmt>(stmt)) {
    // Kept for some of its parts only: those run, as statements of their own, and the
    // variables it declares that the helper uses are declared without their value.
    std::string out;
    if (auto* declarations = dyn_cast<clang::DeclStmt>(stmt)) {
      for (const clang::Decl* decl : declarations->decls()) {
        auto* var = dyn_cast<clang::VarDecl>(decl);
        if (var != nullptr && referenced_.count(var)) {
          out += Declaration(var->getType(), var->getNameAsString(), context_) + ";\n";
        }
      }
    }
    std::vector<const clang::Stmt*> parts;
    outline_.SliceParts(stmt, &parts);
    for (const clang::Stmt* part : parts) {
      Emitted(part);
      out += "(void)(" + Text(part) + ");\n";
    }
    return out;
  }
  Emitted(stmt);
  std::string text = Text(stmt);
  if (scratch_ == nullptr) return text;
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  if (text.empty() || text.back() != ';') text += ";";
  // The helper may not use what it declares (the program used it for work the slice left
  // out): say so, or -Wall warns.
  if (auto* declarations = dyn_cast<clang::DeclStmt>(stmt)) {
    for (const clang::Decl* decl : declarations->decls()) {
      if (auto* var = dyn_cast<clang::VarDecl>(decl)) text += " (void)" + var->getNameAsString() + ";";
    }
  }
  return text + "\n";
}

std::string Declaration(clang::QualType type, const std::string& name,
                        const clang::ASTContext& context) {
  std::string out;
  llvm::raw_string_ostream stream(out);
  type.getUnqualifiedType().print(stream, context.getPrintingPolicy(), name);
  return stream.str();
}

}  // namespace slice
}  // namespace stagio
