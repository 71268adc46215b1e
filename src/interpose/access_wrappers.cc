// The data-access wrappers, generated from STAGIO_MPI_FILE_ACCESS and STAGIO_MPI_FILE_SPLIT_END
// in mpi_file_symbols.h.
//
// Every wrapper reads the same way: while stagio is inactive it is a plain PMPI call; otherwise
// it describes the call in an engine::AccessCall and hands it to the engine together with a thunk
// for the PMPI call it stands for, because the engine itself decides whether the file and the
// call are stagio's (see mpiio/engine.h) and falls back to that thunk when they are not.
//
// How a row becomes a wrapper. Two of its traits fix the prototype shape:
//   positioning  Explicit functions take an MPI_Offset after the handle; the file-pointer ones
//                (Individual, Shared, Ordered) do not. STAGIO_ADDRESSING_<positioning> maps the
//                four values onto these two shapes, Offset and Pointer.
//   completion   Blocking ends in MPI_Status*, Nonblocking in MPI_Request*, SplitBegin in neither.
// STAGIO_SHAPE pastes the two into the name of one of the six macros STAGIO_WRAP_<addressing>_
// <completion>, each of which spells out one prototype. The direction only picks the buffer type,
// and the count type (int or MPI_Count) comes from whether the plain or the _c form is generated.
#include <mpi.h>

#include "interpose/mpi_file_symbols.h"
#include "mpiio/engine.h"

namespace {

namespace engine = stagio::engine;
using engine::AccessCall;
using engine::Completion;
using engine::Direction;
using engine::Positioning;

// Fills an AccessCall. Arguments a prototype does not have are passed as 0 or nullptr.
// The buffer of a write arrives const; the engine never writes through it (engine.h).
AccessCall Describe(const char* kind, Direction direction, Positioning positioning,
                    Completion completion, bool collective, MPI_File file, MPI_Offset offset,
                    const void* buffer, MPI_Count count, MPI_Datatype datatype,
                    MPI_Status* status, MPI_Request* request) {
  return AccessCall{kind,   direction, positioning, completion, collective, file,
                    offset, const_cast<void*>(buffer), count, datatype, status, request};
}

}  // namespace

// A row's traits as Describe's second to fifth arguments.
#define STAGIO_TRAITS(DIRECTION, POSITIONING, COMPLETION, COLLECTIVE)                              \
  Direction::k##DIRECTION, Positioning::k##POSITIONING, Completion::k##COMPLETION, COLLECTIVE

#define STAGIO_BUFFER_Read void*
#define STAGIO_BUFFER_Write const void*

#define STAGIO_ADDRESSING_Explicit Offset
#define STAGIO_ADDRESSING_Individual Pointer
#define STAGIO_ADDRESSING_Shared Pointer
#define STAGIO_ADDRESSING_Ordered Pointer

// Two levels, so that ADDRESSING is expanded (Explicit -> Offset) before it is pasted.
#define STAGIO_SHAPE(ADDRESSING, COMPLETION) STAGIO_SHAPE_NAME(ADDRESSING, COMPLETION)
#define STAGIO_SHAPE_NAME(ADDRESSING, COMPLETION) STAGIO_WRAP_##ADDRESSING##_##COMPLETION

// The six prototype shapes. NAME is the suffix after MPI_File_ ("read_at", "read_at_c").

#define STAGIO_WRAP_Offset_Blocking(NAME, BUFFER, COUNT, TRAITS)                                   \
  extern "C" STAGIO_EXPORT int MPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFFER buf,         \
                                               COUNT count, MPI_Datatype datatype,                 \
                                               MPI_Status* status) {                               \
    if (!engine::Active()) return PMPI_File_##NAME(fh, offset, buf, count, datatype, status);      \
    const AccessCall call =                                                                        \
        Describe(#NAME, TRAITS, fh, offset, buf, count, datatype, status, nullptr);                \
    return engine::Access(                                                                         \
        call, [&] { return PMPI_File_##NAME(fh, offset, buf, count, datatype, status); });         \
  }

#define STAGIO_WRAP_Pointer_Blocking(NAME, BUFFER, COUNT, TRAITS)                                  \
  extern "C" STAGIO_EXPORT int MPI_File_##NAME(MPI_File fh, BUFFER buf, COUNT count,               \
                                               MPI_Datatype datatype, MPI_Status* status) {        \
    if (!engine::Active()) return PMPI_File_##NAME(fh, buf, count, datatype, status);              \
    const AccessCall call =                                                                        \
        Describe(#NAME, TRAITS, fh, 0, buf, count, datatype, status, nullptr);                     \
    return engine::Access(call,                                                                    \
                          [&] { return PMPI_File_##NAME(fh, buf, count, datatype, status); });     \
  }

#define STAGIO_WRAP_Offset_Nonblocking(NAME, BUFFER, COUNT, TRAITS)                                \
  extern "C" STAGIO_EXPORT int MPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFFER buf,         \
                                               COUNT count, MPI_Datatype datatype,                 \
                                               MPI_Request* request) {                             \
    if (!engine::Active()) return PMPI_File_##NAME(fh, offset, buf, count, datatype, request);     \
    const AccessCall call =                                                                        \
        Describe(#NAME, TRAITS, fh, offset, buf, count, datatype, nullptr, request);               \
    return engine::Access(                                                                         \
        call, [&] { return PMPI_File_##NAME(fh, offset, buf, count, datatype, request); });        \
  }

#define STAGIO_WRAP_Pointer_Nonblocking(NAME, BUFFER, COUNT, TRAITS)                               \
  extern "C" STAGIO_EXPORT int MPI_File_##NAME(MPI_File fh, BUFFER buf, COUNT count,               \
                                               MPI_Datatype datatype, MPI_Request* request) {      \
    if (!engine::Active()) return PMPI_File_##NAME(fh, buf, count, datatype, request);             \
    const AccessCall call =                                                                        \
        Describe(#NAME, TRAITS, fh, 0, buf, count, datatype, nullptr, request);                    \
    return engine::Access(call,                                                                    \
                          [&] { return PMPI_File_##NAME(fh, buf, count, datatype, request); });    \
  }

#define STAGIO_WRAP_Offset_SplitBegin(NAME, BUFFER, COUNT, TRAITS)                                 \
  extern "C" STAGIO_EXPORT int MPI_File_##NAME(MPI_File fh, MPI_Offset offset, BUFFER buf,         \
                                               COUNT count, MPI_Datatype datatype) {               \
    if (!engine::Active()) return PMPI_File_##NAME(fh, offset, buf, count, datatype);              \
    const AccessCall call =                                                                        \
        Describe(#NAME, TRAITS, fh, offset, buf, count, datatype, nullptr, nullptr);               \
    return engine::Access(call,                                                                    \
                          [&] { return PMPI_File_##NAME(fh, offset, buf, count, datatype); });     \
  }

#define STAGIO_WRAP_Pointer_SplitBegin(NAME, BUFFER, COUNT, TRAITS)                                \
  extern "C" STAGIO_EXPORT int MPI_File_##NAME(MPI_File fh, BUFFER buf, COUNT count,               \
                                               MPI_Datatype datatype) {                            \
    if (!engine::Active()) return PMPI_File_##NAME(fh, buf, count, datatype);                      \
    const AccessCall call =                                                                        \
        Describe(#NAME, TRAITS, fh, 0, buf, count, datatype, nullptr, nullptr);                    \
    return engine::Access(call, [&] { return PMPI_File_##NAME(fh, buf, count, datatype); });       \
  }

// One row, plain form: MPI_File_<suffix>(..., int count, ...).
#define STAGIO_DEFINE_ACCESS(SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE)               \
  STAGIO_SHAPE(STAGIO_ADDRESSING_##POSITIONING, COMPLETION)                                        \
  (SUFFIX, STAGIO_BUFFER_##DIRECTION, int,                                                         \
   STAGIO_TRAITS(DIRECTION, POSITIONING, COMPLETION, COLLECTIVE))

// One row, large-count form: MPI_File_<suffix>_c(..., MPI_Count count, ...).
#define STAGIO_DEFINE_ACCESS_C(SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE)             \
  STAGIO_SHAPE(STAGIO_ADDRESSING_##POSITIONING, COMPLETION)                                        \
  (SUFFIX##_c, STAGIO_BUFFER_##DIRECTION, MPI_Count,                                               \
   STAGIO_TRAITS(DIRECTION, POSITIONING, COMPLETION, COLLECTIVE))

// The _end half of a split collective. The engine matches it to its _begin by file.
#define STAGIO_DEFINE_SPLIT_END(SUFFIX, DIRECTION)                                                 \
  extern "C" STAGIO_EXPORT int MPI_File_##SUFFIX(MPI_File fh, STAGIO_BUFFER_##DIRECTION buf,       \
                                                 MPI_Status* status) {                             \
    if (!engine::Active()) return PMPI_File_##SUFFIX(fh, buf, status);                             \
    return engine::SplitEnd(#SUFFIX, fh, const_cast<void*>(buf), status,                           \
                            [&] { return PMPI_File_##SUFFIX(fh, buf, status); });                  \
  }

STAGIO_MPI_FILE_ACCESS(STAGIO_DEFINE_ACCESS)

// Open MPI 4.1 reports MPI_VERSION 3 and has no _c functions; MPICH 4 has all of them.
#if MPI_VERSION >= 4
STAGIO_MPI_FILE_ACCESS(STAGIO_DEFINE_ACCESS_C)
#endif

STAGIO_MPI_FILE_SPLIT_END(STAGIO_DEFINE_SPLIT_END)
