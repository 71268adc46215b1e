#include "program_slice.h"

#include <set>

namespace stagio {
namespace slice {

const FunctionSlice* ProgramSlice::SliceOf(const clang::FunctionDecl* function) const {
  for (const FunctionSlice& slice : slices) {
    if (slice.decl == function) return &slice;
  }
  return nullptr;
}

ProgramSlice SliceProgram(const std::vector<std::unique_ptr<clang::ASTUnit>>& units) {
  ProgramSlice program;
  std::vector<const clang::FunctionDecl*> bodies;
  std::set<std::string> defined;  // with a body anywhere, the units' headers included
  for (const auto& unit : units) {
    clang::ASTContext& context = unit->getASTContext();
    for (clang::Decl* decl : context.getTranslationUnitDecl()->decls()) {
      auto* function = llvm::dyn_cast<clang::FunctionDecl>(decl);
      if (function == nullptr || !function->doesThisDeclarationHaveABody()) continue;
      defined.insert(function->getNameAsString());
      if (!unit->getSourceManager().isInMainFile(function->getLocation())) continue;
      bodies.push_back(function);
      if (program.functions.count(function->getNameAsString())) {
        program.defined_twice.insert(function->getNameAsString());
      }
      program.functions[function->getNameAsString()] = function;
      program.unit_of[function] = unit.get();
    }
  }
  program.known.write_only_arguments = FunctionsWritingOnlyArguments(bodies);
  program.known.library_bound = FunctionsWritingOnlyArgumentsAndLibraries(bodies, defined);
  program.known.parameter_writes = FindParameterWrites(bodies);
  program.known.stored_parameters = FindStoredParameters(bodies);
  program.known.fields_read_by = FindFieldsReadBy(bodies);
  std::map<const clang::FunctionDecl*, FunctionSlice> sliced;
  for (bool changed = true; changed;) {
    changed = false;
    for (const clang::FunctionDecl* function : bodies) {
      FunctionSlice slice;
      clang::ASTContext& context = program.unit_of[function]->getASTContext();
      if (!SliceFunction(*function, context, program.known, &slice)) continue;
      const std::string name = function->getNameAsString();
      auto need = program.known.needs.find(name);
      if (need == program.known.needs.end() || need->second != slice.needed_parameters) {
        program.known.needs[name] = slice.needed_parameters;
        changed = true;
      }
      for (const auto& [callee, indices] : slice.callee_out_needs) {
        std::set<unsigned>& needs = program.known.out_needs[callee];
        const size_t before = needs.size();
        needs.insert(indices.begin(), indices.end());
        changed = changed || needs.size() != before;
      }
      if (slice.returns_unavailable && program.known.returns_unavailable.insert(name).second) {
        changed = true;
      }
      const size_t returns_before = program.known.returns_needed.size();
      program.known.returns_needed.insert(slice.callee_returns_needed.begin(),
                                          slice.callee_returns_needed.end());
      changed = changed || program.known.returns_needed.size() != returns_before;
      const size_t fields_before = program.known.fields_read.size();
      program.known.fields_read.insert(slice.fields_read.begin(), slice.fields_read.end());
      changed = changed || program.known.fields_read.size() != fields_before;
      auto& data = program.known.file_data_parameters[name];
      if (data != slice.file_data_parameters) {
        data = slice.file_data_parameters;
        changed = true;
      }
      sliced[function] = slice;
    }
  }
  for (const clang::FunctionDecl* function : bodies) {
    auto it = sliced.find(function);
    if (it != sliced.end()) program.slices.push_back(it->second);
  }
  return program;
}

}  // namespace slice
}  // namespace stagio
