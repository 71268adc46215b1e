/* stagio public C API.
 *
 * stagio works without any of this: put libstagio.so under an unmodified MPI program with
 * LD_PRELOAD (or link it ahead of -lmpi) and every MPI_File_* call goes through it. This header
 * is for programs that want to ask stagio something or steer it.
 *
 * Threading: every function may be called from any thread after MPI_Init and before
 * MPI_Finalize. The control functions call no MPI; the pre-execution ones are described below.
 */
#ifndef STAGIO_STAGIO_H_
#define STAGIO_STAGIO_H_

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library version, "major.minor.patch". */
const char *stagio_version(void);

/* 1 if stagio is intercepting MPI-IO in this process (initialized, not STAGIO_DISABLE=1). */
int stagio_is_active(void);

/* Test support. Makes the storage driver fail on purpose; requires STAGIO_DRIVER=fault (or the
 * hint stagio_driver=fault), otherwise returns -1 and changes nothing. `spec` is a comma-separated
 * list of rules "op=action" with op one of open, read, write, sync (open: stagio's own open of
 * the file's storage, after MPI opened it) and action one of
 *   fail          every call of that op fails with an I/O error,
 *   fail_after:N  the next N calls succeed, later ones fail,
 *   ok            calls succeed (removes the rule).
 * An empty spec removes all rules. Returns 0 on success, -1 on a malformed spec (nothing changed). */
int stagio_inject_faults(const char *spec);

/* ---------------------------------------------------------------------------------------------
 * Pre-execution prefetching (PP, and PP with inter-thread I/O scheduling, PPIS).
 *
 * A helper thread runs the program's I/O slice, the part of the program that decides what it
 * reads and writes, ahead of the main thread, calling the prefetch counterparts below instead
 * of the MPI-IO calls. stagio fetches what the slice announces into its cache, so the main
 * thread's reads find their data there. Nothing is predicted: the slice knows the future
 * requests because it computes them the way the program does.
 *
 *   static void slice(void *arg) {          // the I/O slice, written by hand
 *     struct job *job = arg;
 *     for (int i = 0; i < job->reads; ++i)
 *       stagio_prefetch_read_at(job->file, row_offset(job, i), job->cols, MPI_DOUBLE);
 *   }
 *   ...
 *   stagio_preexec *run = stagio_preexec_start(slice, &job, &job.file, 1);
 *   for (int i = 0; i < job.reads; ++i) {   // the program, unchanged
 *     MPI_File_read_at(job.file, row_offset(&job, i), row, job.cols, MPI_DOUBLE, &status);
 *     compute(row);
 *   }
 *   stagio_preexec_join(run);
 *
 * Sequence numbers. The slice must make, per file, the same data-access calls (any read or
 * write; a collective or nonblocking call counts once) and the same sync and set_size calls as
 * the main thread, in the same order. Its k-th call on a file stands for the main thread's k-th
 * call on it (counted from when the file was handed to the helper). That is how stagio knows:
 *   - that the helper has fallen behind: if the main thread has already started call k, the
 *     helper's call k is skipped instead of fetching data already used (lag skipping);
 *   - which main-thread call a prefetch read must wait for: a prefetch write records its byte
 *     range as dirty, tagged with its sequence number, and a later prefetch read that overlaps
 *     it waits until the main thread has made that write (delayed synchronization);
 *   - when a sync point is reached (see below).
 *
 * Scheduling (stagio_preexec hint or STAGIO_PREEXEC environment variable):
 *   ppis  (default) the helper starts no storage request while the main thread is inside a
 *         stagio I/O call; requests already under way finish, and the helper resumes when the
 *         main thread leaves. The main thread's I/O always goes first (seed 003).
 *   pp    the helper fetches whenever it can, competing with the main thread (seed 001).
 *   off   stagio_preexec_start starts no thread; the program runs as without the slice.
 *
 * What the helper fetches stays in the cache until the main thread reads it, within a bound of
 * half the cache (stagio_cache_size): a helper that far ahead waits for the main thread.
 *
 * Correctness does not depend on the slice. A wrong slice only wastes fetches: every prefetch
 * call is silent (it never reports an error, never changes a file or the main thread's file
 * pointers and views, and moves no user data), and stagio's cache never lets a fetch hide a
 * write. Errors (unknown handle, bad arguments, storage errors) are dropped and counted in the
 * file's stats (preexec_dropped).
 *
 * Requirements. The helper calls MPI (datatype queries, and in collective-cache mode requests
 * to the ranks that cache a block), so stagio asks MPI for MPI_THREAD_MULTIPLE at MPI_Init
 * unless stagio_preexec=off. If MPI provides less, stagio_preexec_start warns once and starts
 * nothing. The slice itself must not call MPI_File_* functions, and must not call MPI
 * collectives on communicators the main thread uses.
 *
 * Collective forms are not collective: each rank's helper fetches its own part of the
 * collective call, and helpers never communicate with each other.
 * ------------------------------------------------------------------------------------------- */

typedef struct stagio_preexec stagio_preexec;

/* Starts slice(arg) on a new helper thread. `files` lists `nfiles` handles the calling (main)
 * thread has already opened and the slice will use (NULL if none; the slice can find later
 * files with stagio_prefetch_open). For each, the helper starts at the file's current state:
 * its prefetch file pointer at the individual file pointer, its prefetch view at the current
 * view, its sequence numbers at the next main-thread call. Call from the thread that makes the
 * program's I/O calls, after MPI_Init. Returns a runner for stagio_preexec_join, never NULL:
 * when pre-execution is off (stagio_preexec=off, stagio inactive, MPI without
 * MPI_THREAD_MULTIPLE) no thread starts and the slice never runs. */
stagio_preexec *stagio_preexec_start(void (*slice)(void *arg), void *arg, const MPI_File *files,
                                     int nfiles);

/* Waits for the slice to return and frees the runner. From the moment join is called, every
 * prefetch call of that helper returns at once and every wait it is in is released, so a slice
 * that lags or waits for a call the main thread never makes ends quickly. */
void stagio_preexec_join(stagio_preexec *run);

/* Sync points. Each waits until the main thread has made the matching call, then mirrors it.
 *
 * stagio_prefetch_open: the helper's n-th open of a file name stands for the main thread's n-th
 * MPI_File_open of that name (the same string); *file becomes that handle, or MPI_FILE_NULL if
 * the main thread has already closed it again or the runner is being joined. comm, amode and
 * info are not used (the main thread's open decides them); they keep the call's shape.
 * stagio_prefetch_close: waits until the main thread has closed the file, then sets *file to
 * MPI_FILE_NULL. stagio_prefetch_sync and stagio_prefetch_set_size count as calls of the
 * sequence and wait until the main thread has made them: prefetches after a sync point then see
 * what the main thread's call made visible. */
void stagio_prefetch_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                          MPI_File *file);
void stagio_prefetch_close(MPI_File *file);
void stagio_prefetch_sync(MPI_File file);
void stagio_prefetch_set_size(MPI_File file, MPI_Offset size);

/* The helper's own file view and prefetch file pointer (as MPI_File_set_view and
 * MPI_File_seek, but for the helper only). set_view resets the prefetch pointer to 0. */
void stagio_prefetch_set_view(MPI_File file, MPI_Offset disp, MPI_Datatype etype,
                              MPI_Datatype filetype, const char *datarep, MPI_Info info);
void stagio_prefetch_seek(MPI_File file, MPI_Offset offset, int whence);

/* Reads: fetch into the cache what the matching MPI_File_read* call will read. `offset` is in
 * etypes of the helper's view; the forms without it use and move the prefetch file pointer. */
void stagio_prefetch_read_at(MPI_File file, MPI_Offset offset, MPI_Count count,
                             MPI_Datatype datatype);
void stagio_prefetch_read(MPI_File file, MPI_Count count, MPI_Datatype datatype);
void stagio_prefetch_read_at_all(MPI_File file, MPI_Offset offset, MPI_Count count,
                                 MPI_Datatype datatype);
void stagio_prefetch_read_all(MPI_File file, MPI_Count count, MPI_Datatype datatype);

/* Writes: write nothing; record the bytes the matching MPI_File_write* call will write as a
 * dirty range, so later prefetch reads of them wait for that call. */
void stagio_prefetch_write_at(MPI_File file, MPI_Offset offset, MPI_Count count,
                              MPI_Datatype datatype);
void stagio_prefetch_write(MPI_File file, MPI_Count count, MPI_Datatype datatype);
void stagio_prefetch_write_at_all(MPI_File file, MPI_Offset offset, MPI_Count count,
                                  MPI_Datatype datatype);
void stagio_prefetch_write_all(MPI_File file, MPI_Count count, MPI_Datatype datatype);

#ifdef __cplusplus
}
#endif

#endif /* STAGIO_STAGIO_H_ */
