// stagio-slice: builds the pre-execution helper of an MPI program from its C sources (seed 001,
// section IV). Run as clang tools are: the translation units, and their compile flags from a
// compile_commands.json (-p DIR) or after `--`.
//
// It compiles the input, finds the slice's criteria (every MPI-IO call), slices the functions
// that make them (program_slice.h), builds the helper (helper_builder.h), and writes the
// rewritten sources with -o DIR or --in-place, and what it did and why as a report (text on
// standard error, JSON with --report). A program it cannot make a safe helper for is written
// unchanged, with the reason.
//
// Exit status: 0 rewritten or left unchanged (the report says which); 1 the input does not
// compile; 2 usage (no compile flags, an option wrong, an output that cannot be written);
// 3 the input makes no MPI-IO call. Nothing is written unless the status is 0.
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "criteria.h"
#include "function_slice.h"
#include "helper_builder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "program_slice.h"

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
llvm::cl::opt<std::string> output_dir(
    "o", llvm::cl::desc("write every input source, rewritten or not, into this directory"),
    llvm::cl::value_desc("DIR"), llvm::cl::cat(category));
llvm::cl::opt<bool> in_place("in-place", llvm::cl::desc("rewrite the input sources themselves"),
                             llvm::cl::cat(category));
llvm::cl::extrahelp more_help(
    "\nFlags: give the compile flags after `--` (for an MPI program, those of `mpicc -show`),\n"
    "or a build directory holding compile_commands.json with -p.\n"
    "Without -o or --in-place, only the report is written.\n"
    "Exit status: 0 rewritten or left unchanged (the report says why), 1 does not compile,\n"
    "2 usage or an output that cannot be written, 3 no MPI-IO call.\n");

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
                          const std::vector<stagio::slice::FunctionSlice>& slices,
                          const stagio::slice::HelperBuild& helper) {
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
          {"status", helper.built ? "rewritten" : "unchanged"},
          {"reason", helper.built ? nullptr : nlohmann::json(helper.reason)},
          {"criteria", criteria},
          {"mpi_init", inits},
          {"slices", SlicesJson(slices)},
          {"helper", helper.report}};
}

// Writes each input's text (rewritten, or as it is) to `directory`, or over the input.
// Everything is written to a temporary file first and renamed, so a failure leaves no
// half-written source.
bool WriteSources(const std::vector<std::unique_ptr<clang::ASTUnit>>& units,
                  const stagio::slice::HelperBuild& helper) {
  if (!output_dir.empty()) {
    if (std::error_code error = llvm::sys::fs::create_directories(output_dir.getValue())) {
      std::cerr << "stagio-slice: cannot create " << output_dir << ": " << error.message() << "\n";
      return false;
    }
  }
  std::vector<std::pair<std::string, std::string>> moves;  // temporary, final
  std::set<std::string> targets;
  for (const auto& unit : units) {
    const std::string source = unit->getMainFileName().str();
    const std::string target =
        in_place ? source
                 : output_dir + "/" + llvm::sys::path::filename(source).str();
    if (!targets.insert(target).second) {
      std::cerr << "stagio-slice: two inputs are named " << llvm::sys::path::filename(source).str()
                << ": -o cannot hold both\n";
      return false;
    }
    auto changed = helper.sources.find(unit.get());
    const llvm::StringRef text =
        changed != helper.sources.end()
            ? llvm::StringRef(changed->second)
            : unit->getSourceManager().getBufferData(unit->getSourceManager().getMainFileID());
    const std::string temporary = target + ".stagio-slice.tmp";
    std::ofstream out(temporary, std::ios::binary);
    out << text.str();
    out.close();
    if (!out) {
      std::cerr << "stagio-slice: cannot write " << temporary << "\n";
      for (const auto& move : moves) llvm::sys::fs::remove(move.first);
      llvm::sys::fs::remove(temporary);
      return false;
    }
    moves.emplace_back(temporary, target);
  }
  for (const auto& [temporary, target] : moves) {
    if (std::error_code error = llvm::sys::fs::rename(temporary, target)) {
      std::cerr << "stagio-slice: cannot write " << target << ": " << error.message() << "\n";
      return false;
    }
  }
  return true;
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
  if (in_place && !output_dir.empty()) {
    std::cerr << "stagio-slice: give -o DIR or --in-place, not both\n";
    return kExitUsage;
  }
  const stagio::slice::ProgramSlice program = stagio::slice::SliceProgram(units);
  const std::vector<stagio::slice::FunctionSlice>& slices = program.slices;
  const stagio::slice::HelperBuild helper = stagio::slice::BuildHelper(program, units);
  const nlohmann::json report = ReportJson(calls, slices, helper);
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
  if (helper.built) {
    const nlohmann::json& built = helper.report;
    std::cerr << "helper: main's lines " << built["region"]["first_line"] << "-"
              << built["region"]["last_line"] << " run ahead on a helper thread; copied at its "
              << "start: " << built["copied_at_start"].dump() << "; files: "
              << built["files_at_start"].dump() << "; cloned: "
              << built["cloned_functions"].dump() << "\n";
    if (built.contains("mpi_init")) std::cerr << "MPI_Init: " << built["mpi_init"].get<std::string>() << "\n";
  } else {
    std::cerr << "left unchanged: " << helper.reason << "\n";
  }
  // The report's file is opened before any source is written, so that a report that cannot
  // be written stops the run with nothing written.
  std::ofstream report_file;
  if (!report_path.empty() && report_path != "-") {
    report_file.open(report_path);
    if (!report_file) {
      std::cerr << "stagio-slice: cannot write the report to " << report_path << "\n";
      return kExitUsage;
    }
  }
  if ((in_place || !output_dir.empty()) && !WriteSources(units, helper)) return kExitUsage;
  if (report_path == "-") std::cout << report.dump(2) << "\n";
  if (report_file.is_open()) {
    report_file << report.dump(2) << "\n";
    report_file.close();
    if (!report_file) {
      std::cerr << "stagio-slice: cannot write the report to " << report_path << "\n";
      return kExitUsage;
    }
  }
  return 0;
}
