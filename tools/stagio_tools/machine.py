"""What the results were measured on: host, cores, MPI library, stagio's git revision.

Each probe is best-effort: a missing tool gives None, since a benchmark must not fail for lack
of `ompi_info`.
"""

import os
import platform
import socket
import subprocess

# The command that names each MPI library's version, and how to shorten its answer.
_VERSION_PROBES = {
    "mpich": (["mpichversion"], "MPICH Version:", "MPICH "),
    "openmpi": (["ompi_info", "--version"], "Open MPI", ""),
}


def _output(command, cwd=None):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20, cwd=cwd,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def mpi_version(mpi):
    """"MPICH 4.0.2", "Open MPI v4.1.4", or None."""
    command, marker, prefix = _VERSION_PROBES[mpi]
    text = _output(command)
    for line in (text or "").splitlines():
        if line.startswith(marker):
            value = line[len(marker):].strip() if prefix else line.strip()
            return prefix + value
    return None


def git_revision(repo):
    """{"commit": sha, "dirty": bool} of the repository, or {} outside a git checkout."""
    commit = _output(["git", "-C", str(repo), "rev-parse", "HEAD"])
    if not commit:
        return {}
    status = _output(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"])
    return {"commit": commit.strip(), "dirty": bool(status and status.strip())}


def describe_machine(mpi):
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {
        "hostname": socket.gethostname(),
        "nproc": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "mpi": mpi,
        "mpi_version": mpi_version(mpi),
        "load_average_at_start": load,
    }
