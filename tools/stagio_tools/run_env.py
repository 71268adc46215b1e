"""What `stagio run` starts, as pure functions: the command's environment and the daemons'
command lines. run_job.py executes them; the unit tests check them.

Why LD_PRELOAD goes on the whole command, mpiexec included: MPICH's launcher (hydra) hands
its own environment to every rank, so `LD_PRELOAD=libstagio.so mpiexec -n 4 ./app` preloads
stagio into each rank. The launcher and its proxies load the library too, but never call
MPI-IO, and libstagio does nothing before MPI_Init (no ELF constructors), so they are not
affected. Open MPI's mpirun, on one machine, starts its ranks with its own environment too.
(Across machines Open MPI forwards only the variables named with -x; `stagio run` is for a job
on one machine, as its daemons are.)
"""

import os
import signal

# The unix socket path limit (sun_path) is 108 bytes with its NUL.
MAX_SOCKET_PATH = 107


def preload_list(library, existing):
    """LD_PRELOAD with `library` first (its MPI_File_* must bind before the MPI library's),
    then what was already preloaded, without a second copy of `library`. ld.so separates
    entries by colons or spaces; the result uses colons."""
    kept = [entry for entry in existing.replace(" ", ":").split(":")
            if entry and os.path.realpath(entry) != os.path.realpath(library)]
    return ":".join([library] + kept)


def iond_list(addresses):
    """STAGIO_IOND: the daemons' addresses, comma-separated, in daemon order (a block's home
    is chosen by position in this list, so every rank must see the same order)."""
    return ",".join(addresses)


def command_environment(base_env, library, addresses=None):
    """The command's environment: base_env with libstagio.so preloaded and, when daemons were
    started (`addresses`), STAGIO_IOND naming them, replacing any STAGIO_IOND already set."""
    env = dict(base_env)
    env["LD_PRELOAD"] = preload_list(library, base_env.get("LD_PRELOAD", ""))
    if addresses:
        env["STAGIO_IOND"] = iond_list(addresses)
    return env


def socket_path(run_dir, index):
    return os.path.join(run_dir, f"iond-{index}.sock")


def ready_path(run_dir, index):
    return os.path.join(run_dir, f"ready-{index}")


def log_path(log_dir, index):
    return os.path.join(log_dir, f"iond-{index}.log")


def check_socket_path(path):
    """An error message when `path` is too long for a unix socket, else None."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return (f"{path}: too long for a unix socket ({MAX_SOCKET_PATH} bytes at most); "
                "set TMPDIR to a shorter directory")
    return None


def daemon_command(binary, run_dir, index, root, config=None, extra_args=()):
    """stagio-iond number `index` of a run: listening on its own unix socket in run_dir,
    serving `root`, writing its address to its ready file once it listens."""
    command = [binary, "--listen", "unix:" + socket_path(run_dir, index), "--root", root,
               "--ready-file", ready_path(run_dir, index)]
    if config:
        command += ["--config", config]
    return command + list(extra_args)


def exit_status(returncode):
    """A child's status as a shell reports it: 128 + N for a child killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def describe_exit(returncode):
    """"exited with status 1", "was killed by SIGKILL": for messages about a child."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with status {returncode}"
