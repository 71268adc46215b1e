"""Command lines: an MPI job with some environment for its ranks, optionally under stagio-emu.

The two MPI launchers pass environment to ranks differently, and that is the whole difference
between them here:
  MPICH:    mpiexec.mpich -n N env K=V ... prog args
            (hydra forwards the launcher's environment; `env` inside sets what differs per
            rank command, and overrides the LD_PRELOAD that stagio-emu gave mpiexec, which is
            why the stagio modes list both libraries)
  Open MPI: mpirun.openmpi --oversubscribe -n N -x K=V ... prog args
            (4 ranks on a 2-core machine need --oversubscribe; as root it also needs
            OMPI_ALLOW_RUN_AS_ROOT{,_CONFIRM}=1 in the launcher's own environment)
Pure functions: the runner executes what they return, and the unit tests check it.
"""

from dataclasses import dataclass
import os
import shlex

LAUNCHERS = {"mpich": "mpiexec.mpich", "openmpi": "mpirun.openmpi"}


@dataclass(frozen=True)
class Device:
    """The emulated storage device (stagio-emu's options)."""
    latency_ms: float = 5.0
    bandwidth_mbps: float = 200.0
    parallel: int = 8
    seek_ms: float = 0.0   # per request, never overlapping another's (stagio-emu --seek-ms)


@dataclass(frozen=True)
class Link:
    """The emulated compute-node to I/O-node link (stagio-link, and stagio-emu's --link-*
    stage): a one-way latency and the bandwidth of each direction."""
    latency_ms: float
    bandwidth_mbps: float

    def describe(self):
        return (f"{plain_number(self.latency_ms)} ms one way, "
                f"{plain_number(self.bandwidth_mbps)} MB/s each way")


def mpi_command(mpi, ranks, rank_env, argv):
    """The launcher command running argv on `ranks` ranks with rank_env ({name: value}) set in
    every rank (insertion order kept, so commands are reproducible)."""
    if mpi == "mpich":
        command = [LAUNCHERS[mpi], "-n", str(ranks)]
        if rank_env:
            command += ["env"] + [f"{name}={value}" for name, value in rank_env.items()]
        return command + list(argv)
    if mpi == "openmpi":
        command = [LAUNCHERS[mpi], "--oversubscribe", "-n", str(ranks)]
        for name, value in rank_env.items():
            command += ["-x", f"{name}={value}"]
        return command + list(argv)
    raise ValueError(f"unknown MPI implementation {mpi!r}")


def launcher_environment(mpi, base_env, is_root=None):
    """The environment for the launcher process: base_env, plus Open MPI's run-as-root consent
    when running as root (mpirun refuses to start otherwise)."""
    env = dict(base_env)
    if is_root is None:
        is_root = os.geteuid() == 0
    if mpi == "openmpi" and is_root:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def emulated_command(emulator, data_dir, stats_path, device, command, link=None):
    """`command` under stagio-emu: requests on files under data_dir cost emulated time; with a
    `link` (Link), each request also crosses that link in series with the device."""
    return [emulator, *device_options(data_dir, device), *link_options(link),
            "--stats", str(stats_path), "--"] + list(command)


def device_options(data_dir, device):
    options = ["--dir", str(data_dir), "--latency-ms", plain_number(device.latency_ms),
               "--bandwidth-mbps", plain_number(device.bandwidth_mbps),
               "--parallel", str(device.parallel)]
    # Only when there is one, so that the commands of devices without a seek read as before.
    return options + (["--seek-ms", plain_number(device.seek_ms)] if device.seek_ms else [])


def link_options(link, prefix="--link-"):
    """stagio-emu's --link-latency-ms/--link-bandwidth-mbps, or stagio-link's own options
    (prefix "--"); none without a link."""
    if link is None:
        return []
    return [f"{prefix}latency-ms", plain_number(link.latency_ms),
            f"{prefix}bandwidth-mbps", plain_number(link.bandwidth_mbps)]


def plain_number(value):
    """5.0 -> "5", 0.5 -> "0.5": what a person would type, and what strict parsers accept."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def shell_join(command):
    """A command as one line that can be pasted into a shell."""
    return " ".join(shlex.quote(str(part)) for part in command)
