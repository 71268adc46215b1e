#include "helper_builder.h"

#include <algorithm>
#include <set>

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "emitted_code.h"
#include "mpi_calls.h"
#include "statement_outline.h"

namespace stagio {
namespace slice {
namespace {

using clang::dyn_cast;

constexpr const char* kPrefix = "stagio_slice_";

// One function of the helper: main's region, or a clone.
struct HelperFunction {
  const clang::FunctionDecl* decl = nullptr;
  const clang::ASTUnit* unit = nullptr;
  bool root = false;
  std::unique_ptr<StatementOutline> outline;
  std::unique_ptr<EmittedCode> code;
};

std::string SourceText(const clang::ASTContext& context, clang::SourceRange range) {
  const clang::SourceManager& sources = context.getSourceManager();
  return clang::Lexer::getSourceText(sources.getExpansionRange(range), sources,
                                     context.getLangOpts())
      .str();
}

unsigned LineOf(const clang::ASTContext& context, clang::SourceLocation location) {
  const clang::SourceManager& sources = context.getSourceManager();
  return sources.getExpansionLineNumber(location);
}

bool Contains(const clang::Stmt* outer, const clang::Stmt* inner) {
  if (outer == inner) return true;
  for (const clang::Stmt* child : outer->children()) {
    if (child != nullptr && Contains(child, inner)) return true;
  }
  return false;
}

// The calls under a statement.
void CallsUnder(const clang::Stmt* stmt, std::vector<const clang::CallExpr*>* calls) {
  if (stmt == nullptr) return;
  if (auto* call = dyn_cast<clang::CallExpr>(stmt)) calls->push_back(call);
  for (const clang::Stmt* child : stmt->children()) CallsUnder(child, calls);
}

// Whether a call's value is unused: it is a statement of its own.
bool IsStatement(const StatementOutline& outline, const clang::Stmt* call) {
  const clang::Stmt* parent = outline.Parent(call);
  if (parent == nullptr || clang::isa<clang::CompoundStmt>(parent) ||
      clang::isa<clang::SwitchCase>(parent) || clang::isa<clang::LabelStmt>(parent)) {
    return true;
  }
  if (auto* branch = dyn_cast<clang::IfStmt>(parent)) {
    return call == branch->getThen() || call == branch->getElse();
  }
  if (auto* loop = dyn_cast<clang::ForStmt>(parent)) {
    return call == loop->getBody() || call == loop->getInc() || call == loop->getInit();
  }
  if (auto* loop = dyn_cast<clang::WhileStmt>(parent)) return call == loop->getBody();
  if (auto* loop = dyn_cast<clang::DoStmt>(parent)) return call == loop->getBody();
  return false;
}

// Whether a type can be named at file scope (it is not declared inside a function) and has
// a size known when compiling.
bool NameableAtFileScope(clang::QualType type) {
  if (type->isVariablyModifiedType()) return false;
  for (;;) {
    if (auto* typedef_type = type->getAs<clang::TypedefType>()) {
      if (typedef_type->getDecl()->getDeclContext()->isFunctionOrMethod()) return false;
    }
    if (auto* tag = type->getAsTagDecl()) {
      if (tag->getDeclContext()->isFunctionOrMethod()) return false;
    }
    if (type->isPointerType()) {
      type = type->getPointeeType();
    } else if (type->isArrayType()) {
      type = clang::QualType(type->getArrayElementTypeNoTypeQual(), 0);
    } else {
      return true;
    }
  }
}

bool IsMpiFile(clang::QualType type) {
  if (auto* typedef_type = type->getAs<clang::TypedefType>()) {
    return typedef_type->getDecl()->getName() == "MPI_File";
  }
  return false;
}

// The MPI_File handles a copied variable holds: itself, its fields, its elements.
void FileHandles(clang::QualType type, const std::string& expression,
                 std::vector<std::string>* handles) {
  if (IsMpiFile(type)) {
    handles->push_back(expression);
    return;
  }
  if (auto* array = dyn_cast<clang::ConstantArrayType>(type.getCanonicalType().getTypePtr())) {
    const uint64_t count = array->getSize().getZExtValue();
    for (uint64_t i = 0; i < count && i < 64; ++i) {
      FileHandles(array->getElementType(), expression + "[" + std::to_string(i) + "]", handles);
    }
    return;
  }
  if (auto* record = type->getAsRecordDecl()) {
    if (record->isUnion()) return;
    for (const clang::FieldDecl* field : record->fields()) {
      FileHandles(field->getType(), expression + "." + field->getNameAsString(), handles);
    }
  }
}

// `return_type name(parameters)` of a function, as the source has it, renamed.
std::string Prototype(const clang::FunctionDecl* function, const std::string& name,
                      bool keep_static) {
  const clang::ASTContext& context = function->getASTContext();
  const clang::SourceManager& sources = context.getSourceManager();
  const clang::SourceLocation begin = sources.getExpansionLoc(function->getBeginLoc());
  const clang::SourceLocation at = sources.getExpansionLoc(function->getLocation());
  const clang::SourceLocation body = sources.getExpansionLoc(function->getBody()->getBeginLoc());
  const clang::LangOptions& language = context.getLangOpts();
  std::string head = clang::Lexer::getSourceText(clang::CharSourceRange::getCharRange(begin, at),
                                                 sources, language)
                         .str();
  const clang::SourceLocation after_name = clang::Lexer::getLocForEndOfToken(at, 0, sources, language);
  std::string tail = clang::Lexer::getSourceText(
                         clang::CharSourceRange::getCharRange(after_name, body), sources, language)
                         .str();
  while (!tail.empty() && (tail.back() == ' ' || tail.back() == '\n')) tail.pop_back();
  if (!keep_static && head.rfind("static ", 0) == 0) head = head.substr(7);
  return head + name + tail;
}

// Re-indents printed code by its braces, `depth` levels in (two spaces each): the helper's
// statements come from several places of the source, each with its own indentation.
std::string Reindent(const std::string& text, int depth) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line = line.substr(start);
    int opens = 0, closes = 0;
    for (char c : line) {
      opens += c == '{';
      closes += c == '}';
    }
    const int leading_closes = line[0] == '}' ? 1 : 0;
    out += std::string(2 * std::max(0, depth - leading_closes), ' ') + line + "\n";
    depth += opens - closes;
  }
  return out;
}

class Builder {
 public:
  Builder(const ProgramSlice& program, const std::vector<std::unique_ptr<clang::ASTUnit>>& units)
      : program_(program), units_(units) {}

  HelperBuild Build();

 private:
  bool ChooseRegion();
  void Collect();
  void Rewrite();
  std::string CloneDefinition(HelperFunction& function);
  std::string PrefetchText(const clang::CallExpr* call, const HelperFunction& function);
  std::string RootHelper();
  void Edit();
  clang::Rewriter& ScratchOf(const clang::ASTUnit* unit);
  clang::Rewriter& OutputOf(const clang::ASTUnit* unit);
  void Problem(const std::string& problem) { problems_.push_back(problem); }

  const ProgramSlice& program_;
  const std::vector<std::unique_ptr<clang::ASTUnit>>& units_;
  const clang::FunctionDecl* main_ = nullptr;
  const FunctionSlice* main_slice_ = nullptr;
  const clang::CompoundStmt* body_ = nullptr;
  std::vector<const clang::Stmt*> tops_;
  size_t first_ = 0, last_ = 0;
  std::vector<std::unique_ptr<HelperFunction>> functions_;  // [0] is main's region
  std::vector<const clang::VarDecl*> copies_;
  std::vector<std::string> files_;
  std::vector<std::string> problems_;
  std::map<const clang::ASTUnit*, std::unique_ptr<clang::Rewriter>> scratch_, output_;
  nlohmann::json report_ = nlohmann::json::object();
  HelperBuild build_;
};

clang::Rewriter& Builder::ScratchOf(const clang::ASTUnit* unit) {
  auto& rewriter = scratch_[unit];
  if (!rewriter) {
    rewriter = std::make_unique<clang::Rewriter>(
        const_cast<clang::SourceManager&>(unit->getSourceManager()), unit->getLangOpts());
  }
  return *rewriter;
}

clang::Rewriter& Builder::OutputOf(const clang::ASTUnit* unit) {
  auto& rewriter = output_[unit];
  if (!rewriter) {
    rewriter = std::make_unique<clang::Rewriter>(
        const_cast<clang::SourceManager&>(unit->getSourceManager()), unit->getLangOpts());
  }
  return *rewriter;
}

// The region: main's top-level statements from the first that reads or writes a file (itself
// or through an input function) to the last, starting after any statement the slice is cut at.
bool Builder::ChooseRegion() {
  auto found = program_.functions.find("main");
  if (found == program_.functions.end()) {
    build_.reason = "the input has no main: the helper starts in main";
    return false;
  }
  if (!program_.defined_twice.empty()) {
    build_.reason = "the input defines " + *program_.defined_twice.begin() +
                    " in two units: the slicer follows functions by name";
    return false;
  }
  main_ = found->second;
  main_slice_ = program_.SliceOf(main_);
  body_ = dyn_cast<clang::CompoundStmt>(main_->getBody());
  if (main_slice_ == nullptr || body_ == nullptr) {
    build_.reason = "main makes no MPI-IO call, itself or through the input's functions";
    return false;
  }
  for (const clang::Stmt* stmt : body_->body()) tops_.push_back(stmt);
  std::vector<bool> access(tops_.size(), false), cut(tops_.size(), false);
  for (size_t i = 0; i < tops_.size(); ++i) {
    std::vector<const clang::CallExpr*> calls;
    CallsUnder(tops_[i], &calls);
    for (const clang::CallExpr* call : calls) {
      const clang::FunctionDecl* callee = call->getDirectCallee();
      if (callee == nullptr || !main_slice_->statements.count(call)) continue;
      const MpiCall* io = FindMpiIoCall(callee->getNameAsString());
      auto definition = program_.functions.find(callee->getNameAsString());
      const bool io_access =
          io != nullptr && (io->kind == CallKind::kRead || io->kind == CallKind::kWrite);
      const bool through_function = definition != program_.functions.end() &&
                                    program_.SliceOf(definition->second) != nullptr;
      if (io_access || through_function) access[i] = true;
    }
    for (const SliceCut& slice_cut : main_slice_->cuts) {
      if (slice_cut.statement != nullptr && Contains(tops_[i], slice_cut.statement)) cut[i] = true;
    }
  }
  auto first = std::find(access.begin(), access.end(), true);
  if (first == access.end()) {
    build_.reason = "main's MPI-IO calls read or write nothing the helper can fetch";
    return false;
  }
  first_ = first - access.begin();
  last_ = access.rend() - std::find(access.rbegin(), access.rend(), true) - 1;
  for (size_t i = last_ + 1; i-- > first_;) {
    if (!cut[i]) continue;
    const clang::ASTContext& context = main_->getASTContext();
    report_["region_starts_after_cut"] = LineOf(context, tops_[i]->getBeginLoc());
    first_ = i + 1;
    while (first_ <= last_ && !access[first_]) ++first_;
    break;
  }
  if (first_ <= last_) {
    // A goto into the region would skip the helper's start, or start it twice.
    const clang::SourceManager& sources = main_->getASTContext().getSourceManager();
    const clang::SourceLocation begin = sources.getExpansionLoc(tops_[first_]->getBeginLoc());
    const clang::SourceLocation end = sources.getExpansionLoc(tops_[last_]->getEndLoc());
    std::vector<const clang::Stmt*> work = {body_};
    while (!work.empty()) {
      const clang::Stmt* stmt = work.back();
      work.pop_back();
      if (stmt == nullptr) continue;
      if (auto* jump = dyn_cast<clang::GotoStmt>(stmt)) {
        const clang::SourceLocation label =
            sources.getExpansionLoc(jump->getLabel()->getStmt()->getBeginLoc());
        if (!sources.isBeforeInTranslationUnit(label, begin) &&
            !sources.isBeforeInTranslationUnit(end, label)) {
          build_.reason = "a goto in main (line " +
                          std::to_string(sources.getExpansionLineNumber(jump->getBeginLoc())) +
                          ") jumps into the part of main the helper would cover";
          return false;
        }
      }
      for (const clang::Stmt* child : stmt->children()) work.push_back(child);
    }
  }
  if (first_ > last_) {
    std::string cuts;
    for (const SliceCut& slice_cut : main_slice_->cuts) {
      cuts += (cuts.empty() ? "" : "; ") + slice_cut.variable + " comes from " + slice_cut.call +
              " on line " + std::to_string(slice_cut.line);
    }
    build_.reason = "every file access in main needs a value the helper cannot have (" + cuts +
                    ")";
    return false;
  }
  return true;
}

// What the helper's functions hold: main's region, then each function it calls that makes
// MPI-IO calls, cloned from its own slice.
void Builder::Collect() {
  auto root = std::make_unique<HelperFunction>();
  root->decl = main_;
  root->unit = program_.unit_of.at(main_);
  root->root = true;
  functions_.push_back(std::move(root));
  std::set<const clang::FunctionDecl*> queued;
  for (size_t f = 0; f < functions_.size(); ++f) {
    HelperFunction& function = *functions_[f];
    const FunctionSlice* slice = program_.SliceOf(function.decl);
    const clang::ASTContext& context = function.decl->getASTContext();
    function.outline = std::make_unique<StatementOutline>(*function.decl, slice->statements);
    function.code = std::make_unique<EmittedCode>(program_, context, function.root, function.decl);
    EmittedCode* code = function.code.get();
    std::set<const clang::VarDecl*> none;
    OutlinePrinter walk(*function.outline, context, nullptr, function.root,
                        [code](const clang::Stmt* stmt) { code->Add(stmt); }, none);
    if (function.root) {
      for (size_t i = first_; i <= last_; ++i) walk.Child(tops_[i]);
    } else {
      walk.Statement(function.decl->getBody());
      for (const SliceCut& cut : slice->cuts) {
        Problem(function.decl->getNameAsString() + " needs " + cut.variable + ", which comes from " +
                cut.call + " on line " + std::to_string(cut.line));
      }
      if (function.decl->isVariadic()) Problem(function.decl->getNameAsString() + " is variadic");
    }
    for (const std::string& problem : code->problems) Problem(problem);
    for (const clang::FunctionDecl* clone : code->clones) {
      if (clone == main_) {
        Problem("main is called from the I/O path");
      } else if (queued.insert(clone).second) {
        auto next = std::make_unique<HelperFunction>();
        next->decl = clone;
        next->unit = program_.unit_of.at(clone);
        functions_.push_back(std::move(next));
      }
    }
  }
  // main's variables the region uses and does not declare: copied when the helper starts.
  const clang::ASTContext& context = main_->getASTContext();
  const clang::SourceManager& sources = context.getSourceManager();
  const clang::SourceLocation begin = sources.getExpansionLoc(tops_[first_]->getBeginLoc());
  const clang::SourceLocation end = sources.getExpansionLoc(tops_[last_]->getEndLoc());
  for (const clang::VarDecl* var : functions_[0]->code->referenced) {
    if (var->hasGlobalStorage()) continue;
    const clang::SourceLocation at = sources.getExpansionLoc(var->getLocation());
    const bool inside = !sources.isBeforeInTranslationUnit(at, begin) &&
                        !sources.isBeforeInTranslationUnit(end, at);
    if (inside) continue;
    // Copied twice (into the start's struct and the helper's locals), on two stacks.
    constexpr int64_t kLargestCopy = 256 * 1024;
    if (!var->getType()->isIncompleteType() && !var->getType()->isVariablyModifiedType() &&
        context.getTypeSizeInChars(var->getType()).getQuantity() > kLargestCopy) {
      Problem("main's " + var->getNameAsString() + " is too large for the helper to copy (" +
              std::to_string(context.getTypeSizeInChars(var->getType()).getQuantity()) +
              " bytes)");
    }
    if (!NameableAtFileScope(var->getType())) {
      Problem("main's " + var->getNameAsString() +
              " has a type declared inside main, or of variable length: the helper cannot copy it");
    }
    copies_.push_back(var);
  }
  std::sort(copies_.begin(), copies_.end(), [&](const clang::VarDecl* a, const clang::VarDecl* b) {
    return sources.isBeforeInTranslationUnit(a->getLocation(), b->getLocation());
  });
  for (const clang::VarDecl* var : copies_) FileHandles(var->getType(), var->getNameAsString(), &files_);
}

std::string Builder::PrefetchText(const clang::CallExpr* call, const HelperFunction& function) {
  const clang::ASTContext& context = function.decl->getASTContext();
  const MpiCall* io = FindMpiIoCall(call->getDirectCallee()->getNameAsString());
  std::vector<unsigned> passed = io->needed;
  if (io->kind == CallKind::kOpen) passed = {0, 1, 2, 3, 4};
  if (io->kind == CallKind::kView) passed = {0, 1, 2, 3, 4, 5};
  std::string text = io->prefetch + "(";
  for (size_t i = 0; i < passed.size(); ++i) {
    if (passed[i] >= call->getNumArgs()) continue;
    text += (i ? ", " : "") + SourceText(context, call->getArg(passed[i])->getSourceRange());
  }
  text += ")";
  // The program may use what the call returns: the prefetch returns nothing, and says success.
  if (!IsStatement(*function.outline, call)) text = "(" + text + ", MPI_SUCCESS)";
  return text;
}

// The calls the helper makes differently, rewritten in each unit's scratch copy, from which
// the helper's functions are then printed.
void Builder::Rewrite() {
  for (const auto& function : functions_) {
    clang::Rewriter& scratch = ScratchOf(function->unit);
    const clang::ASTContext& context = function->decl->getASTContext();
    const clang::SourceManager& sources = context.getSourceManager();
    for (const clang::CallExpr* call : function->code->prefetches) {
      if (call->getBeginLoc().isMacroID() || call->getEndLoc().isMacroID()) {
        Problem(call->getDirectCallee()->getNameAsString() + " on line " +
                std::to_string(LineOf(context, call->getBeginLoc())) + " is written by a macro");
        continue;
      }
      scratch.ReplaceText(clang::CharSourceRange::getTokenRange(call->getSourceRange()),
                          PrefetchText(call, *function));
    }
    for (const clang::CallExpr* call : function->code->clone_calls) {
      const clang::FunctionDecl* callee = call->getDirectCallee();
      const clang::SourceLocation name = call->getCallee()->getBeginLoc();
      if (name.isMacroID() || call->getEndLoc().isMacroID()) {
        Problem("the call of " + callee->getNameAsString() + " on line " +
                std::to_string(LineOf(context, call->getBeginLoc())) + " is written by a macro");
        continue;
      }
      scratch.ReplaceText(name, callee->getName().size(), kPrefix + callee->getNameAsString());
      for (unsigned index = 0; index < call->getNumArgs(); ++index) {
        const clang::Expr* arg = call->getArg(index);
        if (!function->code->skipped.count(arg)) continue;
        const clang::QualType type = index < callee->getNumParams()
                                         ? callee->getParamDecl(index)->getType()
                                         : arg->getType();
        scratch.ReplaceText(sources.getExpansionRange(arg->getSourceRange()),
                            "(" + Declaration(type, "", context) + "){0}");
      }
    }
  }
}

std::string Builder::CloneDefinition(HelperFunction& function) {
  const clang::ASTContext& context = function.decl->getASTContext();
  OutlinePrinter printer(*function.outline, context, &ScratchOf(function.unit), false, nullptr,
                         function.code->referenced);
  const std::string name = function.decl->getNameAsString();
  std::string body = printer.Statement(function.decl->getBody());
  // The helper uses no value a clone returns (its callers' slices end there), but the function
  // must still return one.
  const clang::QualType result = function.decl->getReturnType();
  if (!result->isVoidType() && body.size() >= 2) {
    body.insert(body.size() - 2, "return (" + Declaration(result, "", context) + "){0};\n");
  }
  return "\n/* stagio-slice: the pre-execution slice of " + name + " */\n" +
         Prototype(function.decl, kPrefix + name, true) + " " + Reindent(body, 0);
}

std::string Builder::RootHelper() {
  const clang::ASTContext& context = main_->getASTContext();
  HelperFunction& root = *functions_[0];
  OutlinePrinter printer(*root.outline, context, &ScratchOf(root.unit), true, nullptr,
                         root.code->referenced);
  std::string text = "\n/* stagio-slice: main's I/O from line " +
                     std::to_string(LineOf(context, tops_[first_]->getBeginLoc())) + " to line " +
                     std::to_string(LineOf(context, tops_[last_]->getEndLoc())) +
                     ", as the pre-execution helper runs it */\n"
                     "static void stagio_slice_main(void *stagio_slice_arg) {\n"
                     "  const struct stagio_slice_main_in *stagio_slice_in = stagio_slice_arg;\n";
  for (const clang::VarDecl* var : copies_) {
    const std::string name = var->getNameAsString();
    if (var->getType()->isArrayType()) {
      text += "  " + Declaration(var->getType(), name, context) + ";\n  memcpy((void *)" + name +
              ", stagio_slice_in->" + name + ", sizeof " + name + ");\n";
    } else {
      text += "  " + Declaration(var->getType(), name, context) + " = stagio_slice_in->" + name +
              ";\n";
    }
  }
  std::string region;
  for (size_t i = first_; i <= last_; ++i) region += printer.Child(tops_[i]);
  return text + Reindent(region, 1) + "}\n";
}

// The edits of the program's own text.
void Builder::Edit() {
  const clang::ASTContext& context = main_->getASTContext();
  const clang::SourceManager& sources = context.getSourceManager();
  const clang::ASTUnit* main_unit = functions_[0]->unit;
  std::map<const clang::ASTUnit*, std::set<const clang::FunctionDecl*>> called_from;
  std::map<const clang::ASTUnit*, std::string> appended;
  for (const auto& function : functions_) {
    for (const clang::FunctionDecl* clone : function->code->clones) {
      called_from[function->unit].insert(clone);
    }
    if (!function->root) appended[function->unit] += CloneDefinition(*function);
  }
  appended[main_unit] = RootHelper() + appended[main_unit];

  for (const auto& [unit, text] : appended) {
    clang::Rewriter& output = OutputOf(unit);
    const clang::SourceManager& unit_sources = unit->getSourceManager();
    const clang::FileID file = unit_sources.getMainFileID();
    // The includes go before the file's first declaration, after its own #defines and
    // #includes (a feature-test macro must come before any system header).
    clang::SourceLocation includes = unit_sources.getLocForStartOfFile(file);
    for (const clang::Decl* decl : unit->getASTContext().getTranslationUnitDecl()->decls()) {
      const clang::SourceLocation at = unit_sources.getExpansionLoc(decl->getBeginLoc());
      if (unit_sources.isInMainFile(at) && !decl->isImplicit()) {
        includes = unit_sources.translateLineCol(file, unit_sources.getExpansionLineNumber(at), 1);
        break;
      }
    }
    output.InsertTextBefore(includes, "#include <string.h>\n#include \"stagio/stagio.h\"\n\n");
    std::string prototypes;
    for (const clang::FunctionDecl* clone : called_from[unit]) {
      prototypes += Prototype(clone, kPrefix + clone->getNameAsString(),
                              program_.unit_of.at(clone) == unit) + ";\n";
    }
    if (unit == main_unit) {
      std::string declarations = "/* stagio-slice: what main's pre-execution helper copies */\n"
                                 "struct stagio_slice_main_in {\n";
      for (const clang::VarDecl* var : copies_) {
        declarations += "  " + Declaration(var->getType(), var->getNameAsString(), context) + ";\n";
      }
      if (copies_.empty()) declarations += "  char unused;\n";
      declarations += "};\nstatic void stagio_slice_main(void *stagio_slice_arg);\n" + prototypes;
      output.InsertTextBefore(sources.getExpansionLoc(main_->getBeginLoc()), declarations + "\n");
      output.InsertTextAfter(unit_sources.getLocForEndOfFile(file), text);
    } else {
      output.InsertTextAfter(unit_sources.getLocForEndOfFile(file), "\n" + prototypes + text);
    }
  }

  // Start and join.
  std::string start = "struct stagio_slice_main_in stagio_slice_in = {";
  std::string arrays;
  bool first = true;
  for (const clang::VarDecl* var : copies_) {
    const std::string name = var->getNameAsString();
    if (var->getType()->isArrayType()) {
      arrays += "memcpy((void *)stagio_slice_in." + name + ", " + name + ", sizeof " + name + ");\n";
      continue;
    }
    start += std::string(first ? "" : ", ") + "." + name + " = " + name;
    first = false;
  }
  start += first ? "0};\n" : "};\n";
  std::string handles;
  for (const std::string& handle : files_) handles += (handles.empty() ? "" : ", ") + handle;
  start += arrays + "stagio_preexec *stagio_slice_helper = stagio_preexec_start(stagio_slice_main, "
           "&stagio_slice_in, " +
           (files_.empty() ? std::string("NULL, 0")
                           : "(const MPI_File[]){" + handles + "}, " +
                                 std::to_string(files_.size())) +
           ");\n";
  clang::Rewriter& output = OutputOf(main_unit);
  // Inserted before a statement, after its indentation: each line ends with it again.
  const std::string indent(
      sources.getExpansionColumnNumber(sources.getExpansionLoc(tops_[first_]->getBeginLoc())) - 1,
      ' ');
  auto indented = [&](const std::string& lines) {
    std::string out;
    for (char c : lines) out += c == '\n' ? "\n" + indent : std::string(1, c);
    return out;
  };
  output.InsertTextBefore(sources.getExpansionLoc(tops_[first_]->getBeginLoc()), indented(start));
  const clang::SourceLocation after =
      last_ + 1 < tops_.size() ? sources.getExpansionLoc(tops_[last_ + 1]->getBeginLoc())
                               : sources.getExpansionLoc(body_->getRBracLoc());
  output.InsertTextBefore(after, last_ + 1 < tops_.size()
                                     ? indented("stagio_preexec_join(stagio_slice_helper);\n")
                                     : "  stagio_preexec_join(stagio_slice_helper);\n");
  // A return inside the region leaves main: the helper is joined first.
  for (size_t i = first_; i <= last_; ++i) {
    std::vector<const clang::Stmt*> work = {tops_[i]};
    while (!work.empty()) {
      const clang::Stmt* stmt = work.back();
      work.pop_back();
      if (stmt == nullptr) continue;
      if (auto* exit = dyn_cast<clang::ReturnStmt>(stmt)) {
        const clang::SourceLocation semicolon = clang::Lexer::findLocationAfterToken(
            sources.getExpansionLoc(exit->getEndLoc()), clang::tok::semi, sources,
            context.getLangOpts(), false);
        if (semicolon.isInvalid()) {
          Problem("the return on line " + std::to_string(LineOf(context, exit->getBeginLoc())) +
                  " cannot be edited");
          continue;
        }
        output.InsertTextBefore(sources.getExpansionLoc(exit->getBeginLoc()),
                                "{ stagio_preexec_join(stagio_slice_helper); ");
        output.InsertTextAfter(semicolon, " }");
        continue;
      }
      if (clang::isa<clang::GotoStmt>(stmt)) {
        Problem("main's region holds a goto on line " +
                std::to_string(LineOf(context, stmt->getBeginLoc())));
      }
      for (const clang::Stmt* child : stmt->children()) work.push_back(child);
    }
  }

  // MPI_Init: the helper thread needs MPI_THREAD_MULTIPLE.
  bool init_found = false;
  for (const auto& unit : units_) {
    std::vector<const clang::CallExpr*> calls;
    const clang::SourceManager& unit_sources = unit->getSourceManager();
    for (const auto& [name, function] : program_.functions) {
      if (program_.unit_of.at(function) == unit.get()) CallsUnder(function->getBody(), &calls);
    }
    for (const clang::CallExpr* call : calls) {
      const clang::FunctionDecl* callee = call->getDirectCallee();
      if (callee == nullptr) continue;
      const std::string name = callee->getNameAsString();
      if (name != "MPI_Init" && name != "MPI_Init_thread") continue;
      init_found = true;
      const clang::ASTContext& unit_context = unit->getASTContext();
      const unsigned line = LineOf(unit_context, call->getBeginLoc());
      if (call->getBeginLoc().isMacroID() || call->getEndLoc().isMacroID()) {
        Problem(name + " on line " + std::to_string(line) + " is written by a macro");
        continue;
      }
      if (name == "MPI_Init" && call->getNumArgs() == 2) {
        OutputOf(unit.get()).ReplaceText(
            clang::CharSourceRange::getTokenRange(call->getSourceRange()),
            "MPI_Init_thread(" + SourceText(unit_context, call->getArg(0)->getSourceRange()) +
                ", " + SourceText(unit_context, call->getArg(1)->getSourceRange()) +
                ", MPI_THREAD_MULTIPLE, &(int){0})");
        report_["mpi_init"] = "MPI_Init on line " + std::to_string(line) +
                              " became MPI_Init_thread with MPI_THREAD_MULTIPLE";
      } else if (name == "MPI_Init_thread" && call->getNumArgs() == 4) {
        const clang::Expr* level = call->getArg(2);
        if (SourceText(unit_context, level->getSourceRange()) != "MPI_THREAD_MULTIPLE") {
          OutputOf(unit.get()).ReplaceText(unit_sources.getExpansionRange(level->getSourceRange()),
                                           "MPI_THREAD_MULTIPLE");
        }
        report_["mpi_init"] = "MPI_Init_thread on line " + std::to_string(line) +
                              " asks for MPI_THREAD_MULTIPLE";
      }
    }
  }
  if (!init_found) {
    report_["mpi_init"] = "no MPI_Init in the input: unless MPI gives MPI_THREAD_MULTIPLE, the "
                          "helper does not run (stagio warns)";
  }
}

HelperBuild Builder::Build() {
  if (!ChooseRegion()) return build_;
  Collect();
  if (problems_.empty()) Rewrite();
  if (problems_.empty()) Edit();
  const clang::ASTContext& context = main_->getASTContext();
  report_["region"] = {{"function", "main"},
                       {"first_line", LineOf(context, tops_[first_]->getBeginLoc())},
                       {"last_line", LineOf(context, tops_[last_]->getEndLoc())}};
  nlohmann::json copies = nlohmann::json::array();
  for (const clang::VarDecl* var : copies_) copies.push_back(var->getNameAsString());
  report_["copied_at_start"] = copies;
  report_["files_at_start"] = files_;
  nlohmann::json clones = nlohmann::json::array();
  for (size_t f = 1; f < functions_.size(); ++f) {
    clones.push_back(functions_[f]->decl->getNameAsString());
  }
  report_["cloned_functions"] = clones;
  report_["problems"] = problems_;
  build_.report = report_;
  if (!problems_.empty()) {
    build_.reason = "the helper would do what it must not: " + problems_.front();
    return build_;
  }
  for (const auto& [unit, rewriter] : output_) {
    const clang::FileID file = unit->getSourceManager().getMainFileID();
    const clang::RewriteBuffer* buffer = rewriter->getRewriteBufferFor(file);
    if (buffer != nullptr) build_.sources[unit] = std::string(buffer->begin(), buffer->end());
  }
  build_.built = true;
  return build_;
}

}  // namespace

HelperBuild BuildHelper(const ProgramSlice& program,
                        const std::vector<std::unique_ptr<clang::ASTUnit>>& units) {
  return Builder(program, units).Build();
}

}  // namespace slice
}  // namespace stagio
