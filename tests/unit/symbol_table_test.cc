// Checks the symbol table of src/interpose/mpi_file_symbols.h.
//
// The compiler already rejects a row whose direction, explicit offset or completion disagrees
// with mpio.h, because the generated prototype would conflict with MPI's. It cannot see the
// traits that leave the prototype alone: collective, and shared vs ordered vs individual. Those
// are checked here against MPI's naming rules, and every row is checked to name a function the
// MPI library really has. The other direction (every MPI_File_* function of the library has a
// row) is tests/mpi/check_symbols.sh's job, on the built libstagio.so.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <set>
#include <string>
#include <vector>

#include "interpose/mpi_file_symbols.h"
#include "mpiio/engine.h"

namespace stagio {
namespace {

using engine::Completion;
using engine::Direction;
using engine::Positioning;

struct AccessRow {
  std::string suffix;
  Direction direction;
  Positioning positioning;
  Completion completion;
  bool collective;
};

struct SplitEndRow {
  std::string suffix;
  Direction direction;
};

enum class Forms { kPlain, kPlainAndC };

#define STAGIO_ACCESS_ROW(SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE)             \
  AccessRow{#SUFFIX, Direction::k##DIRECTION, Positioning::k##POSITIONING,                    \
            Completion::k##COMPLETION, COLLECTIVE},
const std::vector<AccessRow> kAccessRows = {STAGIO_MPI_FILE_ACCESS(STAGIO_ACCESS_ROW)};
#undef STAGIO_ACCESS_ROW

#define STAGIO_SPLIT_END_ROW(SUFFIX, DIRECTION) SplitEndRow{#SUFFIX, Direction::k##DIRECTION},
const std::vector<SplitEndRow> kSplitEndRows = {STAGIO_MPI_FILE_SPLIT_END(STAGIO_SPLIT_END_ROW)};
#undef STAGIO_SPLIT_END_ROW

#define STAGIO_CONTROL_ROW(SUFFIX, OWNER, FORMS) std::pair{std::string(#SUFFIX), Forms::k##FORMS},
const std::vector<std::pair<std::string, Forms>> kControlRows = {
    STAGIO_MPI_FILE_CONTROL(STAGIO_CONTROL_ROW)};
#undef STAGIO_CONTROL_ROW

#define STAGIO_LIFECYCLE_ROW(NAME) std::string(#NAME),
const std::vector<std::string> kLifecycleRows = {STAGIO_MPI_LIFECYCLE(STAGIO_LIFECYCLE_ROW)};
#undef STAGIO_LIFECYCLE_ROW

// Names for failure messages; gtest would print the enums as bytes.
const char* Name(Direction value) { return value == Direction::kRead ? "Read" : "Write"; }
const char* Name(Positioning value) {
  switch (value) {
    case Positioning::kExplicit: return "Explicit";
    case Positioning::kIndividual: return "Individual";
    case Positioning::kShared: return "Shared";
    case Positioning::kOrdered: return "Ordered";
  }
  return "?";
}
const char* Name(Completion value) {
  switch (value) {
    case Completion::kBlocking: return "Blocking";
    case Completion::kNonblocking: return "Nonblocking";
    case Completion::kSplitBegin: return "SplitBegin";
  }
  return "?";
}

bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

bool EndsWith(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// The MPI standard spells the traits into the names: i... is nonblocking, ..._begin starts a
// split collective, _at takes an explicit offset, _all and ordered are collective.
TEST(SymbolTable, AccessTraitsAgreeWithTheName) {
  for (const AccessRow& row : kAccessRows) {
    SCOPED_TRACE(row.suffix);
    EXPECT_STREQ(Name(row.direction),
                 Name(Contains(row.suffix, "read") ? Direction::kRead : Direction::kWrite));

    Positioning positioning = Positioning::kIndividual;
    if (Contains(row.suffix, "_at")) positioning = Positioning::kExplicit;
    if (Contains(row.suffix, "shared")) positioning = Positioning::kShared;
    if (Contains(row.suffix, "ordered")) positioning = Positioning::kOrdered;
    EXPECT_STREQ(Name(row.positioning), Name(positioning));

    Completion completion = Completion::kBlocking;
    if (row.suffix[0] == 'i') completion = Completion::kNonblocking;
    if (EndsWith(row.suffix, "_begin")) completion = Completion::kSplitBegin;
    EXPECT_STREQ(Name(row.completion), Name(completion));

    EXPECT_EQ(row.collective, Contains(row.suffix, "_all") || Contains(row.suffix, "ordered"))
        << "collective";
  }
}

TEST(SymbolTable, EverySplitBeginHasItsEnd) {
  std::set<std::string> begins_as_ends;
  for (const AccessRow& row : kAccessRows) {
    if (row.completion != Completion::kSplitBegin) continue;
    const std::string stem = row.suffix.substr(0, row.suffix.size() - std::string("begin").size());
    begins_as_ends.insert(stem + "end");
  }
  std::set<std::string> ends;
  for (const SplitEndRow& row : kSplitEndRows) {
    SCOPED_TRACE(row.suffix);
    ends.insert(row.suffix);
    EXPECT_STREQ(Name(row.direction),
                 Name(Contains(row.suffix, "read") ? Direction::kRead : Direction::kWrite));
  }
  EXPECT_EQ(begins_as_ends, ends);
}

TEST(SymbolTable, NoFunctionIsListedTwice) {
  std::vector<std::string> names;
  for (const AccessRow& row : kAccessRows) names.push_back(row.suffix);
  for (const SplitEndRow& row : kSplitEndRows) names.push_back(row.suffix);
  for (const auto& [suffix, forms] : kControlRows) names.push_back(suffix);
  const std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
}

// Every generated wrapper calls PMPI_<name>, so every row must name a function MPI defines.
// This test is linked against MPI but not against libstagio.so, so the lookup finds MPI's.
TEST(SymbolTable, EveryRowNamesAnMpiFunction) {
  std::vector<std::string> functions;
  const bool large_count = MPI_VERSION >= 4;
  for (const AccessRow& row : kAccessRows) {
    functions.push_back("PMPI_File_" + row.suffix);
    if (large_count) functions.push_back("PMPI_File_" + row.suffix + "_c");
  }
  for (const SplitEndRow& row : kSplitEndRows) functions.push_back("PMPI_File_" + row.suffix);
  for (const auto& [suffix, forms] : kControlRows) {
    functions.push_back("PMPI_File_" + suffix);
    if (large_count && forms == Forms::kPlainAndC) {
      functions.push_back("PMPI_File_" + suffix + "_c");
    }
  }
  for (const std::string& name : kLifecycleRows) functions.push_back("PMPI_" + name);

  for (const std::string& function : functions) {
    EXPECT_NE(dlsym(RTLD_DEFAULT, function.c_str()), nullptr) << function << " is not in MPI";
  }
}

}  // namespace
}  // namespace stagio
