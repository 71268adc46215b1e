/* stagio public C API.
 *
 * stagio works without any of this: put libstagio.so under an unmodified MPI program with
 * LD_PRELOAD (or link it ahead of -lmpi) and every MPI_File_* call goes through it. This header
 * is for programs that want to ask stagio something or steer it.
 *
 * Threading: every function may be called from any thread after MPI_Init and before
 * MPI_Finalize. None of them calls MPI.
 */
#ifndef STAGIO_STAGIO_H_
#define STAGIO_STAGIO_H_

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

#ifdef __cplusplus
}
#endif

#endif /* STAGIO_STAGIO_H_ */
