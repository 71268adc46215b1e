/* What every conformance program shares: its command line, one line per checked rule, and the
 * helpers the checks have in common.
 *
 *   PROGRAM DIR       (under mpiexec; DIR is where the program's files go, empty or not)
 *
 * Each program checks rules of the MPI-IO chapter of the MPI standard and knows nothing of
 * stagio. A check is collective: every rank calls conf_check() with the same name, in the same
 * order, and rank 0 prints one line on stdout as soon as all ranks have given their outcome:
 *
 *   PASS program.check = observation
 *   FAIL program.check = observation
 *
 * The check passes when it passed on every rank. The observation (rank 0's, optional) is what
 * the rule is about, e.g. the error class a bad argument got; it must not depend on anything but
 * the MPI library's behaviour (no times, addresses, hint lists), since run_conformance.sh
 * compares these lines between plain MPI and stagio. A rank whose check fails says why on
 * stderr. The last line, "DONE program", says the program ran to the end: a program that
 * crashes or hangs (plain MPI does, on some rules) leaves the lines of the checks before it.
 *
 * Errors of MPI-IO calls are returned (the default error handler of files), and each check
 * looks at them; any other MPI error aborts the job, as it means the program itself is wrong.
 *
 * Plain C99, header only: every program is one file.
 */
#ifndef STAGIO_TESTS_CONFORMANCE_CONFORMANCE_H_
#define STAGIO_TESTS_CONFORMANCE_CONFORMANCE_H_

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interposition_report.h"

typedef struct {
  const char *program;
  const char *dir;
  int rank;
  int nranks;
  int failed; /* checks that failed */
} conf_state;

static conf_state conf;

/* Starts the program: MPI_Init, the command line, and the line run_conformance.sh reads to
 * know whether stagio is in the way. */
static inline void conf_begin(int *argc, char ***argv, const char *program) {
  MPI_Init(argc, argv);
  conf.program = program;
  MPI_Comm_rank(MPI_COMM_WORLD, &conf.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &conf.nranks);
  if (*argc != 2) {
    if (conf.rank == 0) fprintf(stderr, "usage: %s DIR\n", program);
    MPI_Finalize();
    exit(64);
  }
  conf.dir = (*argv)[1];
  report_interposition(program);
}

/* Ends the program: "DONE program" and MPI_Finalize. Main's exit status: 0 whatever the
 * checks said (the runner judges the lines, not the status), so that a nonzero status means
 * the program did not run to the end. */
static inline int conf_end(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (conf.rank == 0) {
    printf("DONE %s\n", conf.program);
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}

/* The outcome of one check on this rank: `ok`, and, when it failed, why (printf format).
 * `observed` is printed after the name on rank 0's line; NULL for none. Collective. */
static inline void conf_check(const char *check, int ok, const char *observed, const char *why,
                              ...) {
  if (!ok) {
    va_list args;
    va_start(args, why);
    fprintf(stderr, "%s: rank %d: %s.%s: ", conf.program, conf.rank, conf.program, check);
    vfprintf(stderr, why, args);
    fputc('\n', stderr);
    va_end(args);
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all_ok) conf.failed++;
  if (conf.rank == 0) {
    printf("%s %s.%s%s%s\n", all_ok ? "PASS" : "FAIL", conf.program, check,
           observed ? " = " : "", observed ? observed : "");
    fflush(stdout);
  }
}

/* The name of an error code's class ("MPI_SUCCESS", "MPI_ERR_TYPE", ...), for observations. */
static inline const char *conf_class_name(int code) {
  if (code == MPI_SUCCESS) return "MPI_SUCCESS";
  int error_class = MPI_ERR_UNKNOWN;
  MPI_Error_class(code, &error_class);
  switch (error_class) {
#define CONF_CLASS(name) \
  case name:             \
    return #name;
    CONF_CLASS(MPI_ERR_BUFFER) CONF_CLASS(MPI_ERR_COUNT) CONF_CLASS(MPI_ERR_TYPE)
    CONF_CLASS(MPI_ERR_TAG) CONF_CLASS(MPI_ERR_COMM) CONF_CLASS(MPI_ERR_RANK)
    CONF_CLASS(MPI_ERR_REQUEST) CONF_CLASS(MPI_ERR_ROOT) CONF_CLASS(MPI_ERR_GROUP)
    CONF_CLASS(MPI_ERR_OP) CONF_CLASS(MPI_ERR_TOPOLOGY) CONF_CLASS(MPI_ERR_DIMS)
    CONF_CLASS(MPI_ERR_ARG) CONF_CLASS(MPI_ERR_UNKNOWN) CONF_CLASS(MPI_ERR_TRUNCATE)
    CONF_CLASS(MPI_ERR_OTHER) CONF_CLASS(MPI_ERR_INTERN) CONF_CLASS(MPI_ERR_IN_STATUS)
    CONF_CLASS(MPI_ERR_PENDING) CONF_CLASS(MPI_ERR_ACCESS) CONF_CLASS(MPI_ERR_AMODE)
    CONF_CLASS(MPI_ERR_BAD_FILE) CONF_CLASS(MPI_ERR_CONVERSION) CONF_CLASS(MPI_ERR_DUP_DATAREP)
    CONF_CLASS(MPI_ERR_FILE_EXISTS) CONF_CLASS(MPI_ERR_FILE_IN_USE) CONF_CLASS(MPI_ERR_FILE)
    CONF_CLASS(MPI_ERR_INFO_KEY) CONF_CLASS(MPI_ERR_INFO_NOKEY) CONF_CLASS(MPI_ERR_INFO_VALUE)
    CONF_CLASS(MPI_ERR_INFO) CONF_CLASS(MPI_ERR_IO) CONF_CLASS(MPI_ERR_NO_SPACE)
    CONF_CLASS(MPI_ERR_NO_SUCH_FILE) CONF_CLASS(MPI_ERR_NOT_SAME) CONF_CLASS(MPI_ERR_QUOTA)
    CONF_CLASS(MPI_ERR_READ_ONLY) CONF_CLASS(MPI_ERR_UNSUPPORTED_DATAREP)
    CONF_CLASS(MPI_ERR_UNSUPPORTED_OPERATION)
#undef CONF_CLASS
    default:
      return "another class";
  }
}

/* DIR/name, in a buffer that lives until the next call with the same slot (0..3). */
static inline const char *conf_path(const char *name) {
  static char paths[4][4096];
  static int next;
  char *path = paths[next++ % 4];
  snprintf(path, sizeof paths[0], "%s/%s", conf.dir, name);
  return path;
}

/* Removes DIR/name if it exists (rank 0), so that a program can be run again in one directory.
 * Collective. */
static inline void conf_remove(const char *name) {
  if (conf.rank == 0) remove(conf_path(name));
  MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_File_open on DIR/name over MPI_COMM_WORLD. */
static inline int conf_open(const char *name, int amode, MPI_Info info, MPI_File *file) {
  return MPI_File_open(MPI_COMM_WORLD, conf_path(name), amode, info, file);
}

/* Creates DIR/name afresh (removing what a run before left), opened read-write on every rank,
 * as the check "open". Returns whether it could. Collective. */
static inline int conf_create(const char *name, MPI_File *file) {
  conf_remove(name);
  const int err = conf_open(name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, file);
  conf_check("open", err == MPI_SUCCESS, conf_class_name(err), "%s", conf_class_name(err));
  return err == MPI_SUCCESS;
}

/* A byte that depends on who wrote it and where: the content of every write the programs make,
 * so that a byte read back tells which rank wrote it at which offset. */
static inline unsigned char conf_byte(int writer, int64_t offset) {
  return (unsigned char)(writer * 61 + offset * 7 + (offset >> 8) * 13 + 1);
}

static inline void conf_fill(unsigned char *buffer, int64_t length, int writer, int64_t offset) {
  for (int64_t i = 0; i < length; i++) buffer[i] = conf_byte(writer, offset + i);
}

/* Index of the first byte of `buffer` that is not what `writer` wrote at `offset`, or -1. */
static inline int64_t conf_mismatch(const unsigned char *buffer, int64_t length, int writer,
                                    int64_t offset) {
  for (int64_t i = 0; i < length; i++) {
    if (buffer[i] != conf_byte(writer, offset + i)) return i;
  }
  return -1;
}

/* Bytes transferred according to a status. */
static inline int conf_bytes(const MPI_Status *status) {
  int count = -1;
  MPI_Get_count(status, MPI_BYTE, &count);
  return count;
}

/* The sync-barrier-sync sequence that makes one rank's writes visible to the others in
 * nonatomic mode (MPI 4.0 section 14.6.1). */
static inline int conf_sync_barrier_sync(MPI_File file) {
  int err = MPI_File_sync(file);
  MPI_Barrier(MPI_COMM_WORLD);
  const int err2 = MPI_File_sync(file);
  return err != MPI_SUCCESS ? err : err2;
}

/* An observation made of a printf format, in a static buffer (one at a time). */
static inline const char *conf_observed(const char *format, ...) {
  static char text[256];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  return text;
}

#endif  // STAGIO_TESTS_CONFORMANCE_CONFORMANCE_H_
