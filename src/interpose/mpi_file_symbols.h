// The MPI symbols libstagio.so defines: one table, kept the way Darshan keeps its counters.
//
// Every MPI_File_* function of MPI-IO is listed here once, except the handle conversions
// (MPI_File_c2f, MPI_File_f2c), which carry no I/O. The lists are X-macros: expand a list with a
// macro X of your own and you get one piece of code per row.
//
//   STAGIO_MPI_FILE_ACCESS     data access. access_wrappers.cc generates every wrapper from its
//                              row: the plain form (int count) and, when the MPI library
//                              implements MPI-4 (MPI_VERSION >= 4), the large-count form
//                              MPI_File_<suffix>_c (MPI_Count count). The row's traits choose the
//                              prototype, so a row cannot disagree with mpio.h and still compile.
//   STAGIO_MPI_FILE_SPLIT_END  the second halves of split collectives (no _c form in MPI-4).
//   STAGIO_MPI_FILE_CONTROL    everything else. Their prototypes share nothing, so
//                              file_wrappers.cc writes them by hand; the table says who owns each.
//   STAGIO_MPI_LIFECYCLE       MPI_Init, MPI_Init_thread, MPI_Finalize (init_wrappers.cc).
//
// tests/unit/symbol_table_test.cc checks that each row's traits agree with its name and that
// the MPI library defines every row; tests/mpi/check_symbols.sh checks the other direction, that
// libstagio.so defines every MPI_File_* function the MPI library does.
#pragma once

// The wrappers must stay visible when the rest of libstagio.so is built with hidden visibility:
// they are the whole point of the library.
#define STAGIO_EXPORT __attribute__((visibility("default")))

// Data access, MPI_File_<suffix>. Columns:
//   suffix       the function name after "MPI_File_"; also AccessCall::kind ("_c" appended for
//                the large-count form)
//   direction    Read | Write                    writes take `const void* buf`
//   positioning  Explicit | Individual | Shared | Ordered
//                                                Explicit takes an `MPI_Offset offset`
//   completion   Blocking | Nonblocking | SplitBegin
//                                                ends in MPI_Status*, MPI_Request*, or neither
//   collective   true | false
// The traits are the tokens of engine::Direction, Positioning and Completion without the 'k'.
#define STAGIO_MPI_FILE_ACCESS(X)                                             \
  /* suffix               direction positioning completion   collective */   \
  X(read,                 Read,     Individual, Blocking,    false)           \
  X(read_all,             Read,     Individual, Blocking,    true)            \
  X(read_at,              Read,     Explicit,   Blocking,    false)           \
  X(read_at_all,          Read,     Explicit,   Blocking,    true)            \
  X(read_shared,          Read,     Shared,     Blocking,    false)           \
  X(read_ordered,         Read,     Ordered,    Blocking,    true)            \
  X(iread,                Read,     Individual, Nonblocking, false)           \
  X(iread_all,            Read,     Individual, Nonblocking, true)            \
  X(iread_at,             Read,     Explicit,   Nonblocking, false)           \
  X(iread_at_all,         Read,     Explicit,   Nonblocking, true)            \
  X(iread_shared,         Read,     Shared,     Nonblocking, false)           \
  X(read_all_begin,       Read,     Individual, SplitBegin,  true)            \
  X(read_at_all_begin,    Read,     Explicit,   SplitBegin,  true)            \
  X(read_ordered_begin,   Read,     Ordered,    SplitBegin,  true)            \
  X(write,                Write,    Individual, Blocking,    false)           \
  X(write_all,            Write,    Individual, Blocking,    true)            \
  X(write_at,             Write,    Explicit,   Blocking,    false)           \
  X(write_at_all,         Write,    Explicit,   Blocking,    true)            \
  X(write_shared,         Write,    Shared,     Blocking,    false)           \
  X(write_ordered,        Write,    Ordered,    Blocking,    true)            \
  X(iwrite,               Write,    Individual, Nonblocking, false)           \
  X(iwrite_all,           Write,    Individual, Nonblocking, true)            \
  X(iwrite_at,            Write,    Explicit,   Nonblocking, false)           \
  X(iwrite_at_all,        Write,    Explicit,   Nonblocking, true)            \
  X(iwrite_shared,        Write,    Shared,     Nonblocking, false)           \
  X(write_all_begin,      Write,    Individual, SplitBegin,  true)            \
  X(write_at_all_begin,   Write,    Explicit,   SplitBegin,  true)            \
  X(write_ordered_begin,  Write,    Ordered,    SplitBegin,  true)

// The second half of a split collective: MPI_File_<suffix>(MPI_File, buf, MPI_Status*), with
// `const void* buf` for writes. Each closes the _begin row of the same name.
#define STAGIO_MPI_FILE_SPLIT_END(X) \
  /* suffix               direction */ \
  X(read_all_end,         Read)        \
  X(read_at_all_end,      Read)        \
  X(read_ordered_end,     Read)        \
  X(write_all_end,        Write)       \
  X(write_at_all_end,     Write)       \
  X(write_ordered_end,    Write)

// Everything else, MPI_File_<suffix>. Columns:
//   suffix
//   owner   Engine  calls the engine function of the same name while stagio is active;
//           Mpi     always calls PMPI (file_wrappers.cc says, per function, why that is right)
//   forms   Plain        int/MPI_Aint arguments only
//           PlainAndC    also MPI_File_<suffix>_c in MPI-4
#define STAGIO_MPI_FILE_CONTROL(X)                    \
  /* suffix               owner   forms */           \
  X(open,                 Engine, Plain)              \
  X(close,                Engine, Plain)              \
  X(delete,               Mpi,    Plain)              \
  X(sync,                 Engine, Plain)              \
  X(set_size,             Engine, Plain)              \
  X(preallocate,          Engine, Plain)              \
  X(get_size,             Engine, Plain)              \
  X(set_view,             Engine, Plain)              \
  X(get_view,             Mpi,    Plain)              \
  X(set_info,             Engine, Plain)              \
  X(get_info,             Engine, Plain)              \
  X(set_atomicity,        Engine, Plain)              \
  X(get_atomicity,        Mpi,    Plain)              \
  X(seek,                 Engine, Plain)              \
  X(get_position,         Engine, Plain)              \
  X(seek_shared,          Engine, Plain)              \
  X(get_position_shared,  Mpi,    Plain)              \
  X(get_byte_offset,      Engine, Plain)              \
  X(get_type_extent,      Mpi,    PlainAndC)          \
  X(get_amode,            Mpi,    Plain)              \
  X(get_group,            Mpi,    Plain)              \
  X(get_errhandler,       Mpi,    Plain)              \
  X(set_errhandler,       Mpi,    Plain)              \
  X(create_errhandler,    Mpi,    Plain)              \
  X(call_errhandler,      Mpi,    Plain)

// The program's lifetime, MPI_<name>: the engine starts after MPI_Init and stops before
// MPI_Finalize.
#define STAGIO_MPI_LIFECYCLE(X) \
  X(Init)                       \
  X(Init_thread)                \
  X(Finalize)
