/* What the pre-execution examples share: the I/O slice's counterparts of bench_common's timed
 * calls, and starting and joining the helper thread that runs the slice.
 *
 * A slice must make, per file, the same data-access calls as the program, in the same order
 * (stagio matches them by their sequence numbers; see stagio.h). The program reads and writes
 * through bench_read_at, bench_write_at and bench_read_view, which choose the collective or the
 * independent form by --collective; each slice_* call here announces the matching call in the
 * same form, so that a slice is the program's loop with slice_* in place of bench_* and the
 * computation left out. They run on the helper thread and only read the run's options.
 */
#ifndef STAGIO_EXAMPLES_PREEXEC_SUPPORT_H
#define STAGIO_EXAMPLES_PREEXEC_SUPPORT_H

#include <mpi.h>
#include <stdint.h>

#include "bench_common.h"
#include "stagio/stagio.h"

void slice_read_at(const bench_run *run, MPI_File file, int64_t offset, int64_t length);
void slice_write_at(const bench_run *run, MPI_File file, int64_t offset, int64_t length);
/* The helper's own view, as bench_set_view sets the program's (etype MPI_BYTE, "native"). */
void slice_set_view(const bench_run *run, MPI_File file, int64_t displacement,
                    MPI_Datatype filetype);
void slice_read_view(const bench_run *run, MPI_File file, int64_t length);

/* Starts slice(arg) on the helper for the `nfiles` open `files`: call after the opens, right
 * before the program's loop. Returns NULL, and starts nothing, when the run makes no reads
 * (--skip-io, --skip-reads): the helper would have nothing to fetch, and those runs measure
 * the bounds without it. Whether a helper runs otherwise is stagio's choice (STAGIO_PREEXEC,
 * STAGIO_DISABLE). */
stagio_preexec *example_preexec_start(const bench_run *run, void (*slice)(void *), void *arg,
                                      const MPI_File *files, int nfiles);

/* Joins a helper from example_preexec_start (NULL: nothing to do): after the loop, before the
 * files are closed. */
void example_preexec_join(stagio_preexec *helper);

#endif
