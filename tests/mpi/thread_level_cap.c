/* thread_level_cap: a preload shim that makes MPI look like it supports at most
 * MPI_THREAD_SERIALIZED, so that stagio's MPI_Init wrappers take their real fallback path
 * (per-rank caching, one warning) on an MPI that does provide MPI_THREAD_MULTIPLE.
 *
 *   LD_PRELOAD=libstagio.so:libthread_level_cap.so ./program
 *
 * stagio's wrappers call PMPI_Init / PMPI_Init_thread and then PMPI_Query_thread; this shim
 * defines those three, asks the real MPI (dlsym RTLD_NEXT) for at most MPI_THREAD_SERIALIZED
 * and reports what MPI really provided, capped at MPI_THREAD_SERIALIZED. Query_thread is capped
 * too, because an MPI may give more than asked (MPICH's MPIR_CVAR_DEFAULT_THREAD_LEVEL) and
 * stagio believes Query_thread over Init_thread's answer. Asking the real MPI for less, rather
 * than only lying about the answer, keeps the run honest: if stagio's helper threads called
 * MPI anyway, MPI would be entitled to misbehave, and the differential test would see it.
 * Only the thread level changes; every other call goes to MPI untouched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int Cap(int level) { return level > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED : level; }

/* The next definition of `name` after this library, or exit: a shim that cannot reach MPI
 * must not let the program run as if nothing happened. */
static void *Next(const char *name) {
  void *symbol = dlsym(RTLD_NEXT, name);
  if (symbol == NULL) {
    fprintf(stderr, "thread_level_cap: cannot find the real %s\n", name);
    exit(70);
  }
  return symbol;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  typedef int (*InitThread)(int *, char ***, int, int *);
  static InitThread real = NULL;
  if (real == NULL) real = (InitThread)Next("PMPI_Init_thread");
  const int result = real(argc, argv, Cap(required), provided);
  if (result == MPI_SUCCESS) *provided = Cap(*provided);
  return result;
}

/* MPI_Init asks for MPI_THREAD_SINGLE, which needs no cap; defined so that the shim is in the
 * way whichever of the two stagio calls. */
int PMPI_Init(int *argc, char ***argv) {
  typedef int (*Init)(int *, char ***);
  static Init real = NULL;
  if (real == NULL) real = (Init)Next("PMPI_Init");
  return real(argc, argv);
}

int PMPI_Query_thread(int *provided) {
  typedef int (*QueryThread)(int *);
  static QueryThread real = NULL;
  if (real == NULL) real = (QueryThread)Next("PMPI_Query_thread");
  const int result = real(provided);
  if (result == MPI_SUCCESS) *provided = Cap(*provided);
  return result;
}
