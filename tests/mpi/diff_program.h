/* What every program run by run_differential.sh shares: its command line, the line that tells
 * the script whether libstagio is in the way, and the main that runs its seeds.
 *
 *   PROGRAM --seeds A:B --dir DIR --log PREFIX
 *
 * Plain C, so that the C test programs can share it.
 */
#ifndef STAGIO_TESTS_MPI_DIFF_PROGRAM_H_
#define STAGIO_TESTS_MPI_DIFF_PROGRAM_H_

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interposition_report.h"

typedef struct {
  unsigned first_seed;
  unsigned last_seed;
  const char *dir;
  const char *log_prefix;
} diffprog_args;

/* Parses the command line; prints the usage and exits 64 if it is wrong. */
static inline diffprog_args diffprog_parse_args(const char *program, int argc, char **argv) {
  diffprog_args args = {0, 0, NULL, NULL};
  int have_seeds = 0;
  int ok = argc % 2 == 1;
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--seeds") == 0) {
      have_seeds = sscanf(argv[i + 1], "%u:%u", &args.first_seed, &args.last_seed) == 2 &&
                   args.first_seed <= args.last_seed;
    } else if (strcmp(argv[i], "--dir") == 0) {
      args.dir = argv[i + 1];
    } else if (strcmp(argv[i], "--log") == 0) {
      args.log_prefix = argv[i + 1];
    } else {
      ok = 0;
    }
  }
  if (!ok || !have_seeds || !args.dir || !args.log_prefix) {
    fprintf(stderr, "usage: %s --seeds A:B --dir DIR --log PREFIX\n", program);
    exit(64);
  }
  return args;
}

/* Says "PROGRAM: rank R seed S step T: MESSAGE" on stderr and aborts the job: for set-up
 * failures, after which the run means nothing. */
static inline void diffprog_vfail(const char *program, int rank, unsigned seed, unsigned step,
                                  const char *format, va_list args) {
  fprintf(stderr, "%s: rank %d seed %u step %u: ", program, rank, seed, step);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* One seed's run, as diffprog_main hands it to the program. */
typedef struct {
  const char *dir; /* where the program's files go */
  unsigned seed;
  int rank;
  int nranks;
  FILE *log; /* PREFIX.<rank>, format of diff_log.h */
} diffprog_seed;

/* The whole of a differential program's main: parses the command line, initializes MPI, says
 * whether libstagio is in the way, opens this rank's log and runs `run_seed` for each seed.
 * Returns main's exit status; a log that cannot be written aborts the job. */
static inline int diffprog_main(const char *program, int argc, char **argv,
                                void (*run_seed)(const diffprog_seed *seed)) {
  const diffprog_args args = diffprog_parse_args(program, argc, argv);
  MPI_Init(&argc, &argv);
  diffprog_seed seed = {args.dir, 0, 0, 1, NULL};
  MPI_Comm_rank(MPI_COMM_WORLD, &seed.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &seed.nranks);
  report_interposition(program);
  char log_path[4096];
  snprintf(log_path, sizeof log_path, "%s.%d", args.log_prefix, seed.rank);
  seed.log = fopen(log_path, "wb");
  if (!seed.log) {
    fprintf(stderr, "%s: rank %d: cannot create %s\n", program, seed.rank, log_path);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (seed.seed = args.first_seed; seed.seed <= args.last_seed; seed.seed++) run_seed(&seed);
  if (fclose(seed.log) != 0) {
    fprintf(stderr, "%s: rank %d: cannot write %s\n", program, seed.rank, log_path);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}

#endif /* STAGIO_TESTS_MPI_DIFF_PROGRAM_H_ */
