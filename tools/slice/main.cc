// stagio-slice: builds the pre-execution helper of an MPI program from its C sources (seed 001,
// section IV). Run as clang tools are: the translation units, and their compile flags from a
// compile_commands.json (-p DIR) or after `--`.
//
// What it does so far: it compiles the input, finds the slice's criteria (every MPI-IO call),
// slices each function that makes them within the function (function_slice.h), and reports
// both. Slicing across functions and the rewrite are the next steps; until they exist the tool
// writes no source.
//
// Exit status: 0 analysed; 1 the input does not compile; 2 usage (no compile flags, an option
// wrong, a report that cannot be written); 3 the input makes no MPI-IO call.
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "criteria.h"
#include "function_slice.h"
#include "llvm/Support/CommandLine.h"

namespace {

using stagio::slice::Criterion;
using stagio::slice::ProgramCalls;

constexpr int kExitNoCompile = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoMpiIo = 3;

llvm::cl::OptionCategory category("stagio-slice options");
llvm::cl::opt<std::string> report_path(
    "report", llvm::cl::desc("write the report as JSON to this file ('-': standard output)"),
    llvm::cl::value_desc("FILE"), llvm::cl::cat(category));
llvm::cl::extrahelp more_help(
    "\nFlags: give the compile flags after `--` (for an MPI program, those of `mpicc -show`),\n"
    "or a build directory holding compile_commands.json with -p.\n"
    "Exit status: 0 analysed, 1 does not compile, 2 usage, 3 no MPI-IO call.\n");

// Whether the command line says where the flags come from: `--`, -p, or a compile_commands.json
// found above the first source. Without one, clang tools compile with no flags, and an MPI
// program then fails on its first #include <mpi.h>, which says nothing of the real cause.
bool HasCompileFlags(int argc, const char** argv) {
  std::string first_source;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--" || arg == "-p" || arg.rfind("-p=", 0) == 0) return true;
    if (first_source.empty() && !arg.empty() && arg[0] != '-') first_source = arg;
  }
  if (first_source.empty()) return true;  // the parser reports the missing source
  std::string error;
  return clang::tooling::CompilationDatabase::autoDetectFromSource(first_source, error) != nullptr;
}

// Every function of the input's own files that makes MPI-IO calls, itself or through the
// input's other functions, sliced. A function's slice needs some of its parameters, so each
// call of it is a criterion of its caller's slice for those arguments; callers are sliced
// again until no function needs more (the needs only grow, so this ends). Functions are known
// by name across the translation units.
std::vector<stagio::slice::FunctionSlice> SliceFunctions(
    const std::vector<std::unique_ptr<clang::ASTUnit>>& units) {
  std::vector<std::pair<const clang::FunctionDecl*, clang::ASTContext*>> functions;
  for (const auto& unit : units) {
    clang::ASTContext& context = unit->getASTContext();
    for (clang::Decl* decl : context.getTranslationUnitDecl()->decls()) {
      auto* function = llvm::dyn_cast<clang::FunctionDecl>(decl);
      if (function != nullptr && function->doesThisDeclarationHaveABody() &&
          unit->getSourceManager().isInMainFile(function->getLocation())) {
        functions.emplace_back(function, &context);
      }
    }
  }
  std::vector<const clang::FunctionDecl*> bodies;
  for (const auto& [function, context] : functions) bodies.push_back(function);
  stagio::slice::KnownFunctions known;
  known.write_only_arguments = stagio::slice::FunctionsWritingOnlyArguments(bodies);
  std::map<const clang::FunctionDecl*, stagio::slice::FunctionSlice> sliced;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [function, context] : functions) {
      stagio::slice::FunctionSlice slice;
      if (!stagio::slice::SliceFunction(*function, *context, known, &slice)) continue;
      const std::string name = function->getNameAsString();
      auto need = known.needs.find(name);
      if (need == known.needs.end() || need->second != slice.needed_parameters) {
        known.needs[name] = slice.needed_parameters;
        changed = true;
      }
      sliced[function] = slice;
    }
  }
  std::vector<stagio::slice::FunctionSlice> slices;
  for (const auto& [function, context] : functions) {
    auto it = sliced.find(function);
    if (it != sliced.end()) slices.push_back(it->second);
  }
  return slices;
}

nlohmann::json SlicesJson(const std::vector<stagio::slice::FunctionSlice>& slices) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& slice : slices) {
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& line : slice.lines) lines.push_back({{"line", line.line}, {"why", line.why}});
    nlohmann::json cuts = nlohmann::json::array();
    for (const auto& cut : slice.cuts) {
      cuts.push_back({{"line", cut.line}, {"call", cut.call}, {"variable", cut.variable}});
    }
    all.push_back({{"function", slice.function},
                   {"lines", lines},
                   {"cuts", cuts},
                   {"needed_parameters", slice.needed_parameters}});
  }
  return all;
}

nlohmann::json ReportJson(const ProgramCalls& calls,
                          const std::vector<stagio::slice::FunctionSlice>& slices) {
  nlohmann::json criteria = nlohmann::json::array();
  for (const Criterion& criterion : calls.criteria) {
    criteria.push_back({{"call", criterion.call},
                        {"kind", stagio::slice::KindName(criterion.kind)},
                        {"becomes", criterion.prefetch.empty() ? nullptr
                                                               : nlohmann::json(criterion.prefetch)},
                        {"file", criterion.file},
                        {"line", criterion.line},
                        {"column", criterion.column},
                        {"function", criterion.function}});
  }
  nlohmann::json inits = nlohmann::json::array();
  for (const auto& init : calls.inits) {
    inits.push_back({{"call", init.call}, {"file", init.file}, {"line", init.line}});
  }
  return {{"tool", "stagio-slice"},
          {"status", "analysed"},
          {"criteria", criteria},
          {"mpi_init", inits},
          {"slices", SlicesJson(slices)},
          {"note", "each function is sliced on its own; slicing across functions and the "
                   "rewrite are not built yet: no source was written"}};
}

}  // namespace

int main(int argc, const char** argv) {
  if (!HasCompileFlags(argc, argv)) {
    std::cerr << "stagio-slice: no compile flags: give them after `--` (for an MPI program, "
                 "those of `mpicc -show`), or a build directory with compile_commands.json "
                 "with -p\n";
    return kExitUsage;
  }
  auto parser = clang::tooling::CommonOptionsParser::create(argc, argv, category,
                                                             llvm::cl::OneOrMore);
  if (!parser) {
    std::cerr << "stagio-slice: " << llvm::toString(parser.takeError()) << "\n";
    return kExitUsage;
  }
  clang::tooling::ClangTool tool(parser->getCompilations(), parser->getSourcePathList());
  // Clang's own headers (stddef.h, stdarg.h) are found relative to the compiler's resource
  // directory, which a tool built elsewhere does not have.
  tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(
      "-resource-dir=" STAGIO_CLANG_RESOURCE_DIR, clang::tooling::ArgumentInsertPosition::END));
  std::vector<std::unique_ptr<clang::ASTUnit>> units;
  const int built = tool.buildASTs(units);
  bool compiled = built == 0 && units.size() == parser->getSourcePathList().size();
  for (const auto& unit : units) compiled = compiled && !unit->getDiagnostics().hasErrorOccurred();
  if (!compiled) {
    std::cerr << "stagio-slice: the input does not compile (the errors are above); nothing "
                 "was written\n";
    return kExitNoCompile;
  }
  const ProgramCalls calls = stagio::slice::FindCalls(units);
  if (calls.criteria.empty()) {
    std::cerr << "stagio-slice: no MPI-IO call (MPI_File_*) in the input: there is nothing "
                 "to pre-execute; nothing was written\n";
    return kExitNoMpiIo;
  }
  const std::vector<stagio::slice::FunctionSlice> slices = SliceFunctions(units);
  const nlohmann::json report = ReportJson(calls, slices);
  for (const Criterion& criterion : calls.criteria) {
    std::cerr << criterion.file << ":" << criterion.line << ": " << criterion.call << " in "
              << criterion.function << " -> "
              << (criterion.prefetch.empty() ? "(none: opaque)" : criterion.prefetch) << "\n";
  }
  for (const auto& slice : slices) {
    std::cerr << slice.function << ": " << slice.lines.size() << " lines in the slice";
    for (const auto& cut : slice.cuts) {
      std::cerr << "; cut at line " << cut.line << ": " << cut.variable << " comes from "
                << cut.call;
    }
    std::cerr << "\n";
  }
  if (!report_path.empty()) {
    if (report_path == "-") {
      std::cout << report.dump(2) << "\n";
    } else {
      std::ofstream out(report_path);
      out << report.dump(2) << "\n";
      if (!out) {
        std::cerr << "stagio-slice: cannot write the report to " << report_path << "\n";
        return kExitUsage;
      }
    }
  }
  return 0;
}
