#include "criteria.h"

#include "clang/AST/RecursiveASTVisitor.h"

namespace stagio {
namespace slice {
namespace {

class CallFinder : public clang::RecursiveASTVisitor<CallFinder> {
 public:
  CallFinder(clang::ASTUnit& unit, ProgramCalls* calls)
      : sources_(unit.getSourceManager()), calls_(calls) {}

  bool TraverseFunctionDecl(clang::FunctionDecl* function) {
    const std::string outer = function_;
    function_ = function->getNameAsString();
    const bool more = RecursiveASTVisitor::TraverseFunctionDecl(function);
    function_ = outer;
    return more;
  }

  bool VisitCallExpr(clang::CallExpr* call) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    if (callee == nullptr) return true;
    const clang::SourceLocation where = sources_.getExpansionLoc(call->getBeginLoc());
    if (!sources_.isInMainFile(where)) return true;
    const std::string name = callee->getNameAsString();
    const clang::PresumedLoc place = sources_.getPresumedLoc(where);
    if (name == "MPI_Init" || name == "MPI_Init_thread") {
      calls_->inits.push_back({name, place.getFilename(), place.getLine()});
      return true;
    }
    const MpiCall* known = FindMpiIoCall(name);
    if (known == nullptr) return true;
    calls_->criteria.push_back({name, known->kind, known->prefetch, place.getFilename(),
                                place.getLine(), place.getColumn(), function_});
    return true;
  }

 private:
  const clang::SourceManager& sources_;
  ProgramCalls* calls_;
  std::string function_;
};

}  // namespace

ProgramCalls FindCalls(const std::vector<std::unique_ptr<clang::ASTUnit>>& units) {
  ProgramCalls calls;
  for (const auto& unit : units) {
    CallFinder finder(*unit, &calls);
    finder.TraverseDecl(unit->getASTContext().getTranslationUnitDecl());
  }
  return calls;
}

}  // namespace slice
}  // namespace stagio
