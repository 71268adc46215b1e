// Facts about each of the input's functions as a whole, which the slices of its callers use:
// which pointer parameters it may keep, whether it writes only through its arguments, which
// fields it writes through each pointer parameter, and which fields it reads.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "clang/AST/Decl.h"

namespace stagio {
namespace slice {

// For each input function, the pointer parameters it may keep a copy of (store in memory,
// return, pass to a function that may): the others' pointees are safe from calls it makes
// once it returns.
std::map<std::string, std::set<unsigned>> FindStoredParameters(
    const std::vector<const clang::FunctionDecl*>& functions);

// The input's functions that write only through their pointer arguments: no global, no
// pointer that is not a parameter, and calls only of such functions (or MPI and common C
// library calls). A call of one may write what its arguments point to, not every variable
// whose address escaped.
std::set<std::string> FunctionsWritingOnlyArguments(
    const std::vector<const clang::FunctionDecl*>& functions);

// The input's functions that write only through their pointer arguments themselves, and call
// only such functions, MPI and common C library calls, and functions the input does not
// define (a library the slicer cannot see, fftw_execute). Their calls may write what their
// arguments point to and what a library may reach, not every variable whose address escaped:
// a library can reach only what it was handed.
// `defined`: every function with a body in the units, their headers included (one defined in
// a header is no library: it may do anything).
std::set<std::string> FunctionsWritingOnlyArgumentsAndLibraries(
    const std::vector<const clang::FunctionDecl*>& functions, const std::set<std::string>& defined);

// For each input function (by name), the fields ("record::field", "" for the whole object)
// it may write through each pointer parameter, itself or through the functions it calls.
using ParameterWrites = std::map<std::string, std::map<unsigned, std::set<std::string>>>;
ParameterWrites FindParameterWrites(const std::vector<const clang::FunctionDecl*>& functions);

// For each input function, the fields its body reads (other than to update the same field),
// with its callees'.
std::map<std::string, std::set<std::string>> FindFieldsReadBy(
    const std::vector<const clang::FunctionDecl*>& functions);

}  // namespace slice
}  // namespace stagio
