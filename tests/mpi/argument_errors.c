/* argument_errors: every MPI-IO data-access call, and the view, seek and size calls, with bad
 * arguments.
 *
 *   argument_errors --seeds A:B --dir DIR --log PREFIX
 *
 * MPI-IO checks a call's arguments before it moves a byte, and reports a bad one through the
 * file's error handler (MPI_ERRORS_RETURN unless the program sets another) with an error class.
 * A library in between must return the same class for the same input, leave the buffer, the
 * file and the file pointer alone, and never abort the job instead: MPI_COMM_WORLD keeps its
 * fatal handler here, so an error raised on it ends the run and fails the test.
 *
 * For every row of stagio's symbol table (src/interpose/mpi_file_symbols.h), in the plain and
 * the _c form, and every bad input that applies to it (datatypes null, invalid, freed and
 * uncommitted; a negative count; a negative offset; the wrong access mode; a count that is not
 * a whole number of etypes; and pairs of these, which show the order of the checks), the log
 * holds the class the call returned, what MPI_Wait or the split collective's _end then
 * returned, the bytes moved, the read buffer, and the individual file pointer. Then come the
 * view calls (bad etypes, filetypes, displacements and data representations), the seeks (bad
 * whence, negative positions) and set_size and preallocate with negative sizes, each followed
 * by a valid read that shows the old view and pointer still in force. The final file closes the
 * log: a rejected write must not have written a byte.
 *
 * All ranks make the same calls with the same arguments, so the collective ones match. Reads
 * come before any write, and every write writes the same bytes, so what a rank reads and the
 * final file do not depend on how the ranks interleave. run_differential.sh compares a plain
 * run with a run under libstagio.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_log.h"
#include "diff_program.h"
#include "interpose/mpi_file_symbols.h"

enum { KIND_CALL = 1, KIND_POSITION = 2, KIND_READ_BACK = 3, KIND_FINAL = 4 };

enum {
  kFileSize = 4096,      /* written before the calls, so every valid read is a whole one */
  kBufferBytes = 64,     /* the largest valid access is 4 ints; the rest shows stray writes */
  kOriginalByte = 0x5a,  /* the file's bytes before the writes */
  kWrittenByte = 0xee,   /* what every write writes */
  kUntouchedByte = 0xcc  /* a read buffer before the call */
};

static int g_rank;
static unsigned g_seed;
static unsigned g_step;
static FILE *g_log;

static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  diffprog_vfail("argument_errors", g_rank, g_seed, g_step, format, args);
  va_end(args);
}

/* For the set-up calls, which must work. */
static void check(int code, const char *call) {
  if (code != MPI_SUCCESS) fail("%s failed with error code %d", call, code);
}
#define CHECK(call) check((call), #call)

static void log_record(uint16_t type, uint16_t kind, int64_t value, const char *detail,
                       const void *payload, uint64_t length) {
  g_step++;
  if (difflog_write(g_log, type, kind, g_seed, g_step, value, detail, payload, length) != 0) {
    fail("cannot write the log");
  }
}

/* The error class of `code`, 0 for success, -1 for "not called". */
static int class_of(int code) {
  if (code == MPI_SUCCESS || code == -1) return code == -1 ? -1 : 0;
  int error_class = 0;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) return -2;
  return error_class;
}

static int64_t bytes_of(const MPI_Status *status) {
  int count = 0;
  if (MPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS) return -2;
  return count;
}

/* ---- one data-access call, whatever its shape ---- */

typedef struct {
  MPI_File file;
  MPI_Offset offset; /* explicit-offset calls only */
  void *buffer;
  MPI_Count count;
  MPI_Datatype type;
} call_args;

typedef struct {
  int code;       /* what the call returned */
  int completion; /* what MPI_Wait or the _end returned; -1 when not called */
  int64_t bytes;  /* from the status of the call or of its completion; -1 without one */
} call_result;

/* The _end of a split collective, by the name of its _begin (with or without "_c"). */
static int end_split(const char *begin, MPI_File file, void *buffer, MPI_Status *status) {
  if (strncmp(begin, "read_all_begin", 14) == 0) return MPI_File_read_all_end(file, buffer, status);
  if (strncmp(begin, "read_at_all_begin", 17) == 0) {
    return MPI_File_read_at_all_end(file, buffer, status);
  }
  if (strncmp(begin, "read_ordered_begin", 18) == 0) {
    return MPI_File_read_ordered_end(file, buffer, status);
  }
  if (strncmp(begin, "write_all_begin", 15) == 0) {
    return MPI_File_write_all_end(file, buffer, status);
  }
  if (strncmp(begin, "write_at_all_begin", 18) == 0) {
    return MPI_File_write_at_all_end(file, buffer, status);
  }
  if (strncmp(begin, "write_ordered_begin", 19) == 0) {
    return MPI_File_write_ordered_end(file, buffer, status);
  }
  fail("no _end for %s", begin);
  return MPI_ERR_OTHER;
}

/* The arguments before the buffer, by positioning. */
#define ARGS_Explicit a->file, a->offset
#define ARGS_Individual a->file
#define ARGS_Shared a->file
#define ARGS_Ordered a->file

/* One caller per completion mode; NAME is the function's suffix, COUNT its count type. */
#define CALLER_Blocking(NAME, POSITIONING, COUNT)                                          \
  static void call_##NAME(const call_args *a, call_result *r) {                            \
    MPI_Status status;                                                                     \
    r->code = MPI_File_##NAME(ARGS_##POSITIONING, a->buffer, (COUNT)a->count, a->type,     \
                              &status);                                                    \
    r->completion = -1;                                                                    \
    r->bytes = r->code == MPI_SUCCESS ? bytes_of(&status) : -1;                            \
  }
#define CALLER_Nonblocking(NAME, POSITIONING, COUNT)                                       \
  static void call_##NAME(const call_args *a, call_result *r) {                            \
    MPI_Request request;                                                                   \
    MPI_Status status;                                                                     \
    r->code = MPI_File_##NAME(ARGS_##POSITIONING, a->buffer, (COUNT)a->count, a->type,     \
                              &request);                                                   \
    r->completion = -1;                                                                    \
    r->bytes = -1;                                                                         \
    if (r->code != MPI_SUCCESS) return;                                                    \
    r->completion = MPI_Wait(&request, &status);                                           \
    if (r->completion == MPI_SUCCESS) r->bytes = bytes_of(&status);                        \
  }
#define CALLER_SplitBegin(NAME, POSITIONING, COUNT)                                        \
  static void call_##NAME(const call_args *a, call_result *r) {                            \
    MPI_Status status;                                                                     \
    r->code = MPI_File_##NAME(ARGS_##POSITIONING, a->buffer, (COUNT)a->count, a->type);    \
    r->completion = -1;                                                                    \
    r->bytes = -1;                                                                         \
    if (r->code != MPI_SUCCESS) return;                                                    \
    r->completion = end_split(#NAME, a->file, a->buffer, &status);                         \
    if (r->completion == MPI_SUCCESS) r->bytes = bytes_of(&status);                        \
  }

#define DEFINE_CALLER(SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE) \
  CALLER_##COMPLETION(SUFFIX, POSITIONING, int)
#define DEFINE_CALLER_C(SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE) \
  CALLER_##COMPLETION(SUFFIX##_c, POSITIONING, MPI_Count)

STAGIO_MPI_FILE_ACCESS(DEFINE_CALLER)
#if MPI_VERSION >= 4
STAGIO_MPI_FILE_ACCESS(DEFINE_CALLER_C)
#endif

typedef struct {
  const char *name;
  int write;
  int explicit_offset;
  int individual_pointer;
  int ordered;       /* the shared pointer, in rank order */
  int split;         /* the _begin of a split collective */
  int nonblocking;
  int collective;
  void (*call)(const call_args *, call_result *);
} access_row;

#define IS_WRITE_Read 0
#define IS_WRITE_Write 1
#define IS_EXPLICIT_Explicit 1
#define IS_EXPLICIT_Individual 0
#define IS_EXPLICIT_Shared 0
#define IS_EXPLICIT_Ordered 0
#define IS_INDIVIDUAL_Explicit 0
#define IS_INDIVIDUAL_Individual 1
#define IS_INDIVIDUAL_Shared 0
#define IS_INDIVIDUAL_Ordered 0

#define IS_SPLIT_Blocking 0
#define IS_SPLIT_Nonblocking 0
#define IS_SPLIT_SplitBegin 1
#define IS_NONBLOCKING_Blocking 0
#define IS_NONBLOCKING_Nonblocking 1
#define IS_NONBLOCKING_SplitBegin 0
#define IS_COLLECTIVE_true 1
#define IS_COLLECTIVE_false 0

#define IS_ORDERED_Explicit 0
#define IS_ORDERED_Individual 0
#define IS_ORDERED_Shared 0
#define IS_ORDERED_Ordered 1

#define ROW_OF(NAME, FUNCTION, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE)                 \
  {NAME,                        IS_WRITE_##DIRECTION,      IS_EXPLICIT_##POSITIONING,          \
   IS_INDIVIDUAL_##POSITIONING, IS_ORDERED_##POSITIONING, IS_SPLIT_##COMPLETION,              \
   IS_NONBLOCKING_##COMPLETION, IS_COLLECTIVE_##COLLECTIVE, FUNCTION},
#define ROW(SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE) \
  ROW_OF(#SUFFIX, call_##SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE)
#define ROW_C(SUFFIX, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE) \
  ROW_OF(#SUFFIX "_c", call_##SUFFIX##_c, DIRECTION, POSITIONING, COMPLETION, COLLECTIVE)

static const access_row kRows[] = {
    STAGIO_MPI_FILE_ACCESS(ROW)
#if MPI_VERSION >= 4
    STAGIO_MPI_FILE_ACCESS(ROW_C)
#endif
};

/* ---- the bad inputs ---- */

/* The handles every case may use: the file opened read-write, read-only and write-only. */
typedef struct {
  MPI_File read_write;
  MPI_File read_only;
  MPI_File write_only;
} handles;

/* Datatypes no MPI call may accept. */
typedef struct {
  MPI_Datatype freed;       /* committed, then freed */
  MPI_Datatype uncommitted; /* never committed */
} bad_types;

typedef enum { kRightMode, kWrongMode, kNullFile } which_handle;

typedef struct {
  const char *name;
  MPI_Datatype type;
  MPI_Count count;
  MPI_Offset offset; /* in etypes (ints), for explicit-offset calls */
  which_handle handle;
  int explicit_only; /* the bad part is the offset: calls without one have nothing to check */
  int partial_etype; /* the count is not a whole number of etypes */
} access_case;

/* MPICH's handles are integers it can check; Open MPI's are pointers, and a made-up one
 * crashes plain Open MPI as surely as anything in between. */
#if defined(MPICH)
#define HAVE_CHECKABLE_HANDLES 1
#define INVALID_TYPE ((MPI_Datatype)0x12345)
#else
#define HAVE_CHECKABLE_HANDLES 0
#endif

static int access_cases(const bad_types *bad, access_case *cases) {
  const access_case all[] = {
      {"valid", MPI_INT, 4, 2, kRightMode, 0, 0},
      {"count 0", MPI_INT, 0, 2, kRightMode, 0, 0},
      {"null type", MPI_DATATYPE_NULL, 1, 2, kRightMode, 0, 0},
#if HAVE_CHECKABLE_HANDLES
      {"invalid type", INVALID_TYPE, 1, 2, kRightMode, 0, 0},
#endif
      {"freed type", bad->freed, 1, 2, kRightMode, 0, 0},
      {"uncommitted type", bad->uncommitted, 1, 2, kRightMode, 0, 0},
      {"count -1", MPI_INT, -1, 2, kRightMode, 0, 0},
      {"count 0, null type", MPI_DATATYPE_NULL, 0, 2, kRightMode, 0, 0},
      {"count 0, uncommitted type", bad->uncommitted, 0, 2, kRightMode, 0, 0},
      {"offset -1", MPI_INT, 1, -1, kRightMode, 1, 0},
      {"wrong access mode", MPI_INT, 1, 2, kWrongMode, 0, 0},
      {"part of an etype", MPI_BYTE, 3, 2, kRightMode, 0, 1},
      {"null file", MPI_INT, 1, 2, kNullFile, 0, 0},
      {"count -1, null type", MPI_DATATYPE_NULL, -1, 2, kRightMode, 0, 0},
      {"null type, offset -1", MPI_DATATYPE_NULL, 1, -1, kRightMode, 1, 0},
      {"count -1, offset -1", MPI_INT, -1, -1, kRightMode, 1, 0},
      {"uncommitted type, offset -1", bad->uncommitted, 1, -1, kRightMode, 1, 0},
      {"wrong access mode, null type", MPI_DATATYPE_NULL, 1, 2, kWrongMode, 0, 0},
      {"wrong access mode, uncommitted type", bad->uncommitted, 1, 2, kWrongMode, 0, 0},
      {"wrong access mode, count -1", MPI_INT, -1, 2, kWrongMode, 0, 0},
      {"wrong access mode, offset -1", MPI_INT, 1, -1, kWrongMode, 1, 0},
      {"wrong access mode, part of an etype", MPI_BYTE, 3, 2, kWrongMode, 0, 1},
      {"wrong access mode, count 0", MPI_INT, 0, 2, kWrongMode, 0, 0},
      {"part of an etype, offset -1", MPI_BYTE, 3, -1, kRightMode, 1, 1},
      {"part of an etype, count 0", MPI_BYTE, 0, 2, kRightMode, 0, 0},
  };
  const int count = (int)(sizeof all / sizeof all[0]);
  memcpy(cases, all, sizeof all);
  return count;
}

static MPI_File handle_for(const handles *files, const access_row *row, which_handle which) {
  switch (which) {
    case kRightMode: return files->read_write;
    case kWrongMode: return row->write ? files->read_only : files->write_only;
    case kNullFile: return MPI_FILE_NULL;
  }
  return MPI_FILE_NULL;
}

static void run_access(const handles *files, const access_row *row, const access_case *input) {
  unsigned char buffer[kBufferBytes];
  memset(buffer, row->write ? kWrittenByte : kUntouchedByte, sizeof buffer);
  const call_args args = {handle_for(files, row, input->handle), input->offset, buffer,
                          input->count, input->type};
  call_result result;
  row->call(&args, &result);

  char detail[256];
  snprintf(detail, sizeof detail, "%s: %s -> class %d, completion class %d", row->name,
           input->name, class_of(result.code), class_of(result.completion));
  /* A write's buffer is the library's to read, never to change: log it too. */
  log_record(DIFFLOG_READ, KIND_CALL, result.bytes, detail, buffer, sizeof buffer);
  if (row->individual_pointer && input->handle != kNullFile) {
    MPI_Offset position = -1;
    CHECK(MPI_File_get_position(args.file, &position));
    snprintf(detail, sizeof detail, "%s: %s: individual pointer", row->name, input->name);
    log_record(DIFFLOG_SCALAR, KIND_POSITION, position, detail, NULL, 0);
  }
}

#if defined(OPEN_MPI)
/* Whether a case's datatype and count are valid, so that only its access mode or offset is
 * wrong. */
static int only_mode_or_offset_wrong(const access_case *input) {
  return (input->type == MPI_INT || input->type == MPI_BYTE) && input->count >= 0;
}

/* Erroneous inputs that plain Open MPI (4.1, OMPIO) does not report, or reports elsewhere, where
 * stagio reports them as ROMIO does (docs/mpi-implementations.md):
 *  - a count that is not a whole number of etypes: OMPIO moves the bytes (and the pointer);
 *  - a wrong access mode together with another error: OMPIO checks the mode first, ROMIO and
 *    stagio the arguments;
 *  - a zero count on a file of the wrong access mode: OMPIO refuses it, ROMIO and stagio move
 *    nothing and succeed;
 *  - a negative offset in a split collective: OMPIO reports it at the _end. */
static int plain_lets_pass(const access_row *row, const access_case *input) {
  if (input->partial_etype) return 1;
  if (input->handle == kWrongMode && (input->offset < 0 || input->count == 0)) return 1;
  return row->split && input->offset < 0;
}

/* Inputs on which plain Open MPI (4.1, OMPIO) itself misbehaves, so that it cannot serve as
 * the reference:
 *  - it does not check an explicit offset: a negative one reaches pread or pwrite, which fail
 *    with EINVAL; the blocking calls print that and return MPI_SUCCESS with 0 bytes, and
 *    MPI_Wait on the nonblocking ones crashes in ompi_errhandler_request_invoke;
 *  - its split collectives mark the split open before the access mode is checked, and leave
 *    it open when that check fails; every later _begin on the file then fails;
 *  - at more than 2 ranks (where it picks the vulcan fcoll), its blocking collectives do not
 *    check the access mode: reads of a file opened write-only read it, writes to one opened
 *    read-only fail in pwrite with EBADF yet return MPI_SUCCESS with the bytes counted, and
 *    with an offset of -1 as well, rank 0 fails while the others wait for it. */
static int plain_misbehaves(const access_row *row, const access_case *input, int nranks) {
  if (plain_lets_pass(row, input)) return 1;
  /* At several ranks, where the bytes of shared-pointer writes land after rejected calls
   * depends on the order in which the ranks reach the pointer (seen: the same 4 bytes at
   * different offsets in runs at 2 and 4 ranks). The single-rank run covers these inputs. */
  const int shared_pointer = !row->explicit_offset && !row->individual_pointer;
  if (nranks > 1 && shared_pointer && strcmp(input->name, "valid") != 0) return 1;
  if (!only_mode_or_offset_wrong(input)) return 0;
  if (!row->split && input->offset < 0 && input->handle == kRightMode) return 1;
  if (row->split && input->handle == kWrongMode) return 1;
  const int blocking_collective = row->collective && !row->split && !row->nonblocking;
  return nranks > 2 && blocking_collective && input->handle == kWrongMode;
}
#else
/* Inputs on which plain ROMIO (MPICH 4.0) itself misbehaves, so that it cannot serve as the
 * reference:
 *  - its split collectives mark the split open before they check for whole etypes, and may
 *    leave it open when that check fails; its write split collectives on a file opened
 *    read-only write anyway, fail with MPI_ERR_IO, and leave the split open too. Every later
 *    split collective on the file then fails (at several ranks, some ranks' calls fail and
 *    others' go on to communicate, and the job hangs). stagio returns the class of the bad
 *    argument (MPI_ERR_READ_ONLY for the access mode) and opens no split collective for a
 *    _begin that failed;
 *  - iwrite_shared on a file opened read-only never completes;
 *  - at several ranks, a shared-pointer call after a rejected one can hang, or enter a
 *    collective the other ranks do not (seen: iread_shared_c after one on a file opened
 *    write-only). stagio hands every shared-pointer call to MPI, so the single-rank run, which
 *    covers them with every input, shows that it passes them on unchanged. */
static int plain_misbehaves(const access_row *row, const access_case *input, int nranks) {
  const int shared_pointer = !row->explicit_offset && !row->individual_pointer;
  if (nranks > 1 && shared_pointer && strcmp(input->name, "valid") != 0) return 1;
  if (row->split && input->partial_etype) return 1;
  if (row->split && row->write && input->handle == kWrongMode) return 1;
  return strncmp(row->name, "iwrite_shared", 13) == 0 && input->handle == kWrongMode;
}
#endif

static void run_rows(const handles *files, const bad_types *bad, int writes, int nranks) {
  access_case cases[64];
  const int case_count = access_cases(bad, cases);
  for (size_t r = 0; r < sizeof kRows / sizeof kRows[0]; r++) {
    if (kRows[r].write != writes) continue;
    for (int c = 0; c < case_count; c++) {
      if (cases[c].explicit_only && !kRows[r].explicit_offset) continue;
      if (plain_misbehaves(&kRows[r], &cases[c], nranks)) continue;
      run_access(files, &kRows[r], &cases[c]);
    }
  }
}

/* ---- view, seek and size calls ---- */

/* A valid read after a rejected call, through the view and pointer that must still hold. */
static void read_back(MPI_File file, const char *after) {
  int values[2] = {0, 0};
  MPI_Status status;
  CHECK(MPI_File_read_at(file, 1, values, 2, MPI_INT, &status));
  MPI_Offset position = -1;
  CHECK(MPI_File_get_position(file, &position));
  char detail[256];
  snprintf(detail, sizeof detail, "after %s: read_at 1 and the individual pointer", after);
  log_record(DIFFLOG_READ, KIND_READ_BACK, position, detail, values, sizeof values);
}

static void log_class(const char *call, int code) {
  char detail[256];
  snprintf(detail, sizeof detail, "%s -> class %d", call, class_of(code));
  log_record(DIFFLOG_SCALAR, KIND_CALL, class_of(code), detail, NULL, 0);
}

typedef struct {
  const char *name;
  MPI_Offset displacement;
  MPI_Datatype etype;
  MPI_Datatype filetype;
  const char *datarep;
} view_case;

static void run_views(MPI_File file, const bad_types *bad) {
  const view_case cases[] = {
      {"null etype", 0, MPI_DATATYPE_NULL, MPI_INT, "native"},
      {"null filetype", 0, MPI_INT, MPI_DATATYPE_NULL, "native"},
#if HAVE_CHECKABLE_HANDLES
      {"invalid etype", 0, INVALID_TYPE, MPI_INT, "native"},
      {"invalid filetype", 0, MPI_INT, INVALID_TYPE, "native"},
#endif
      {"freed filetype", 0, MPI_INT, bad->freed, "native"},
      {"uncommitted filetype", 0, MPI_INT, bad->uncommitted, "native"},
      {"uncommitted etype", 0, bad->uncommitted, MPI_INT, "native"},
  /* Plain Open MPI (4.1, OMPIO) accepts a negative displacement, and every later access
   * through the view fails in pread with EINVAL yet returns MPI_SUCCESS with 0 bytes; it
   * rejects a filetype not made of etypes only after installing it as the view (and resetting
   * the pointers). */
#if !defined(OPEN_MPI)
      {"displacement -5", -5, MPI_INT, MPI_INT, "native"},
#endif
      {"unknown data representation", 0, MPI_INT, MPI_INT, "no_such_representation"},
#if !defined(OPEN_MPI)
      {"filetype not made of etypes", 0, MPI_DOUBLE, MPI_INT, "native"},
#endif
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const view_case *c = &cases[i];
    char name[128];
    snprintf(name, sizeof name, "set_view: %s", c->name);
    log_class(name, MPI_File_set_view(file, c->displacement, c->etype, c->filetype, c->datarep,
                                      MPI_INFO_NULL));
    read_back(file, name);
  }
}

static void run_seeks(MPI_File file, int nranks) {
  MPI_Offset size = 0;
  CHECK(MPI_File_get_size(file, &size));
  CHECK(MPI_File_seek(file, 3, MPI_SEEK_SET));
  const struct {
    const char *name;
    MPI_Offset offset;
    int whence;
  } seeks[] = {
      {"whence 99", 0, 99},
      {"set -1", -1, MPI_SEEK_SET},
      {"current -4 from 3", -4, MPI_SEEK_CUR},
      {"end beyond the start", -(size + 100), MPI_SEEK_END},
  };
  char name[128];
  for (size_t i = 0; i < sizeof seeks / sizeof seeks[0]; i++) {
    snprintf(name, sizeof name, "seek: %s", seeks[i].name);
    log_class(name, MPI_File_seek(file, seeks[i].offset, seeks[i].whence));
    read_back(file, name);
#if defined(OPEN_MPI)
    /* Plain Open MPI (4.1, OMPIO) checks a negative position on rank 0 only, which sets the
     * shared pointer to it all the same and returns MPI_ERR_OTHER while the other ranks return
     * MPI_SUCCESS; every later shared-pointer access then fails in pwrite with EINVAL. */
    (void)nranks;
    if (seeks[i].whence != 99) continue;
#else
    /* At several ranks, ROMIO's seek_shared checks these on rank 0 only, which then returns
     * while the others wait for it in a broadcast. stagio hands seek_shared to MPI. */
    if (nranks > 1) continue;
#endif
    snprintf(name, sizeof name, "seek_shared: %s", seeks[i].name);
    log_class(name, MPI_File_seek_shared(file, seeks[i].offset, seeks[i].whence));
    read_back(file, name);
  }
  MPI_Offset displacement = -1;
  log_class("get_byte_offset -1", MPI_File_get_byte_offset(file, -1, &displacement));
  log_record(DIFFLOG_SCALAR, KIND_POSITION, displacement, "get_byte_offset -1", NULL, 0);
  log_class("set_size -1", MPI_File_set_size(file, -1));
  read_back(file, "set_size -1");
  log_class("preallocate -1", MPI_File_preallocate(file, -1));
  read_back(file, "preallocate -1");
  CHECK(MPI_File_get_size(file, &size));
  log_record(DIFFLOG_SCALAR, KIND_POSITION, size, "size after the size calls", NULL, 0);
}

/* A split collective's halves out of order: an _end without its _begin, a second _begin. */
static void run_split_misuse(MPI_File file) {
#if defined(OPEN_MPI)
  /* OMPIO does not track split collectives: an _end without a _begin, or a second _end,
   * succeeds. stagio returns ROMIO's class for them (docs/mpi-implementations.md). */
  (void)file;
  return;
#endif
  int values[4] = {0, 0, 0, 0};
  MPI_Status status;
  log_class("read_all_end without a begin", MPI_File_read_all_end(file, values, &status));
  log_class("write_at_all_end without a begin",
            MPI_File_write_at_all_end(file, values, &status));
  CHECK(MPI_File_read_at_all_begin(file, 1, values, 2, MPI_INT));
  log_class("read_all_begin while read_at_all_begin is open",
            MPI_File_read_all_begin(file, values, 2, MPI_INT));
  log_class("read_at_all_end", MPI_File_read_at_all_end(file, values, &status));
  log_record(DIFFLOG_READ, KIND_READ_BACK, bytes_of(&status), "read_at_all_end's values",
             values, sizeof values);
  log_class("read_at_all_end again", MPI_File_read_at_all_end(file, values, &status));
}

/* ---- the run ---- */

static void open_handles(const char *path, handles *files) {
  CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &files->read_write));
  CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &files->read_only));
  CHECK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &files->write_only));
  /* Etypes of 4 bytes, so that 3 bytes are part of an etype. */
  MPI_File all[3] = {files->read_write, files->read_only, files->write_only};
  for (int i = 0; i < 3; i++) {
    CHECK(MPI_File_set_view(all[i], 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  }
}

static void close_handles(handles *files) {
  CHECK(MPI_File_close(&files->read_write));
  CHECK(MPI_File_close(&files->read_only));
  CHECK(MPI_File_close(&files->write_only));
}

static void create_file(const char *path) {
  if (g_rank == 0) {
    FILE *file = fopen(path, "wb");
    if (!file) fail("cannot create %s", path);
    for (int i = 0; i < kFileSize; i++) fputc(kOriginalByte, file);
    if (fclose(file) != 0) fail("cannot write %s", path);
  }
  CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static void log_final_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) fail("cannot read %s back", path);
  static unsigned char contents[4 * kFileSize];
  const size_t length = fread(contents, 1, sizeof contents, file);
  fclose(file);
  log_record(DIFFLOG_FINAL_FILE, KIND_FINAL, (int64_t)length, "the file", contents, length);
}

static void run_seed(const char *dir, int nranks) {
  char path[4096];
  snprintf(path, sizeof path, "%s/argument_errors_%u.dat", dir, g_seed);
  create_file(path);
  log_record(DIFFLOG_SEED_BEGIN, 0, 0, "argument_errors", NULL, 0);

  bad_types bad;
  MPI_Datatype freed;
  CHECK(MPI_Type_contiguous(2, MPI_INT, &freed));
  CHECK(MPI_Type_commit(&freed));
  bad.freed = freed;
  CHECK(MPI_Type_free(&freed));
  CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &bad.uncommitted));

  handles files;
  open_handles(path, &files);
  run_rows(&files, &bad, /*writes=*/0, nranks);
  run_split_misuse(files.read_write);
  run_views(files.read_write, &bad);
  run_seeks(files.read_write, nranks);
  /* Every rank has read what it reads before anyone writes. */
  CHECK(MPI_Barrier(MPI_COMM_WORLD));
  run_rows(&files, &bad, /*writes=*/1, nranks);
  close_handles(&files);
  CHECK(MPI_Type_free(&bad.uncommitted));

  CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) {
    log_final_file(path);
    CHECK(MPI_File_delete(path, MPI_INFO_NULL));
  }
  log_record(DIFFLOG_SEED_END, 0, 0, "argument_errors", NULL, 0);
}

/* Takes the seed's rank, log and number for the helpers above. */
static void run_one_seed(const diffprog_seed *seed) {
  g_rank = seed->rank;
  g_log = seed->log;
  g_seed = seed->seed;
  g_step = 0;
  run_seed(seed->dir, seed->nranks);
}

int main(int argc, char **argv) {
  return diffprog_main("argument_errors", argc, argv, run_one_seed);
}
