// OpenBeneath: opens a path relative to a directory descriptor without ever leaving that
// directory, whatever the path's components are and however they change while it is opened.
//
// Checking a resolved path and then opening it by name is a race: between the two, a client
// that can create entries under the directory swaps a component for a symbolic link, and the
// open follows it out. Here the path is never resolved apart from the open. Two ways, with the
// same answers:
//   kKernel  openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS (Linux 5.6): the kernel
//            resolves every component, symbolic links included, and fails with EXDEV instead
//            of leaving the directory;
//   kWalk    for kernels without it: one component at a time, each opened O_PATH | O_NOFOLLOW
//            relative to the descriptor of the one before, which is held open. A symbolic link
//            is read and its target resolved the same way; `..` goes back to the descriptor
//            kept for the parent, and never above the starting directory.
// Semantics of both: symbolic links are followed as long as they stay beneath the directory
// (a relative target); an absolute target, or `..` above the directory, is an escape; more
// than 40 links is a loop. Magic links (/proc/self/fd/N) are never followed. Hard links are
// files like any other: the kernel's protected_hardlinks keeps users from linking files they
// could not read.
//
// Opening never blocks on a FIFO or a device (O_NONBLOCK); the caller checks what it got.
#pragma once

#include <string>

#include "common/status.h"
#include "net/socket.h"

namespace stagio {
namespace iond {

enum class BeneathMethod {
  kKernel,  // openat2; fails with NotSupported where the kernel lacks it
  kWalk,    // the component walk
  kAuto,    // openat2 where the kernel has it, else the walk
};

// Opens `relative` (no leading '/'; empty components and "." are ignored) beneath the
// directory `directory` with open(2) `flags` (O_NONBLOCK, O_CLOEXEC and O_NOCTTY are added).
// Errors: InvalidArgument "escapes" for a path that would leave the directory, NotFound for a
// missing component, IOError with strerror's text for the rest (ELOOP, ENOTDIR, EACCES, ...);
// *error_number is the errno behind it (EXDEV for an escape).
Status OpenBeneath(int directory, const std::string& relative, int flags, BeneathMethod method,
                   net::UniqueFd* file, int* error_number);

// True if this kernel has openat2 (asked once).
bool KernelOpensBeneath();

}  // namespace iond
}  // namespace stagio
