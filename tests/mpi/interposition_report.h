/* The line by which a test program tells its runner whether stagio is in the way.
 *
 * Rank 0 says on stderr whether libstagio is loaded and what stagio_is_active() returns on
 * every rank ("PROGRAM: libstagio loaded, stagio_is_active()=1 on all ranks"). Runners check
 * it because a mistyped LD_PRELOAD path makes the loader print only a warning, and a comparison
 * with plain MPI would then pass trivially. The program knows nothing of stagio: it looks the function up at run time, so that the same executable
 * runs plain and under LD_PRELOAD. Collective over MPI_COMM_WORLD.
 *
 * Plain C, for the C and C++ test programs alike.
 */
#ifndef STAGIO_TESTS_MPI_INTERPOSITION_REPORT_H_
#define STAGIO_TESTS_MPI_INTERPOSITION_REPORT_H_

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static inline void report_interposition(const char *program) {
  int (*is_active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "stagio_is_active");
  const int mine = is_active ? is_active() : -1;
  int lowest = 0, highest = 0, rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank != 0) return;
  if (lowest != highest) {
    fprintf(stderr, "%s: stagio_is_active() differs between ranks\n", program);
  } else if (lowest < 0) {
    fprintf(stderr, "%s: libstagio not loaded\n", program);
  } else {
    fprintf(stderr, "%s: libstagio loaded, stagio_is_active()=%d on all ranks\n", program,
            lowest);
  }
}

#endif  // STAGIO_TESTS_MPI_INTERPOSITION_REPORT_H_
