"""What one `stagio bench` invocation runs, resolved: the parsed command line, and the paths of
the programs and libraries it needs in the build directory."""

from dataclasses import dataclass, field
import os
import shutil

from . import launch
from . import plan
from . import workloads as table


@dataclass
class BenchConfig:
    workloads: list            # Workload rows, in table order
    modes: list                # Mode rows, in MODES order
    reps: int
    rank_counts: tuple         # each workload and mode runs at every one, in this order
    mpi: str                   # "mpich" or "openmpi"
    build_dir: str
    out_dir: str
    work_dir: str
    device: launch.Device
    quick: bool = False
    busy: bool = False
    compute_ms: float = None   # overrides every workload's compute_ms when set
    timeout_s: float = 600.0
    command_line: list = field(default_factory=list)
    suite: str = "default"     # suites.py: what the report shows
    link: launch.Link = None   # the emulated link every run crosses (the iond suites), or none
    iond_args: tuple = ()      # options every stagio-iond of the run gets (the iond suites)

    @property
    def input_ranks(self):
        """The rank count inputs are made for. A workload's layout only grows with its ranks
        and every byte holds the same pattern whatever the file's size, so the input of the
        largest count serves the smaller ones: one file per workload, not one per count."""
        return max(self.rank_counts)

    @property
    def data_dir(self):
        """Data files; the only directory the emulator charges for."""
        return os.path.join(self.work_dir, "data")

    @property
    def scratch_dir(self):
        """Stats files, outside data_dir so that writing them costs no emulated time."""
        return os.path.join(self.work_dir, "scratch")

    def device_for(self, workload):
        """The emulated device of a workload's runs: its own when the table gives it one (the
        saturated rows are defined by theirs), the run's otherwise."""
        return workload.device or self.device

    def compute_ms_for(self, workload):
        if self.compute_ms is not None:
            return self.compute_ms
        if self.quick and workload.quick_compute_ms is not None:
            return workload.quick_compute_ms
        return workload.compute_ms


@dataclass(frozen=True)
class Artifacts:
    libstagio: str
    libemu: str
    emulator: str
    launcher: str
    iond: str = ""   # stagio-iond and stagio-link: the iond mode's daemon and relay
    link: str = ""

    @classmethod
    def in_build(cls, build_dir, mpi):
        build_dir = os.path.abspath(build_dir)
        return cls(libstagio=os.path.join(build_dir, "libstagio.so"),
                   libemu=os.path.join(build_dir, "libstagio_emu.so"),
                   emulator=os.path.join(build_dir, "stagio-emu"),
                   launcher=launch.LAUNCHERS[mpi],
                   iond=os.path.join(build_dir, "stagio-iond"),
                   link=os.path.join(build_dir, "stagio-link"))


def missing_pieces(config, artifacts):
    """Human lines naming everything the runs need that is not there (empty when all is)."""
    missing = []
    needs_emulator = any(plan.emulated(w, m) for w in config.workloads for m in config.modes)
    needs_stagio = any(mode.stagio for mode in config.modes) or \
        any(w.links_stagio for w in config.workloads)
    files = []
    if needs_stagio:
        files.append(artifacts.libstagio)
    if needs_emulator:
        files += [artifacts.libemu, artifacts.emulator]
    files += [table.program_path(config.build_dir, w) for w in config.workloads]
    if any(mode.iond for mode in config.modes):
        files.append(artifacts.link)
    for path in dict.fromkeys(files):
        if not os.path.exists(path):
            missing.append(f"{path} (not built)")
    iond_modes = [mode.name for mode in config.modes if mode.iond]
    if iond_modes and not os.path.exists(artifacts.iond):
        missing.append(f"{artifacts.iond} (not built): the I/O-node daemon of issue 6, which "
                       f"mode{'s' if len(iond_modes) > 1 else ''} {', '.join(iond_modes[:3])}"
                       f"{', ...' if len(iond_modes) > 3 else ''} need; build the target "
                       "stagio-iond, or leave those modes out (--modes plain,client)")
    if shutil.which(artifacts.launcher) is None:
        missing.append(f"{artifacts.launcher} (not on PATH)")
    return missing


def built_mpi(build_dir):
    """The STAGIO_MPI the build directory was configured with, or None if unknown. Programs and
    libstagio.so built against one MPI cannot run under the other's launcher."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as cache:
            for line in cache:
                if line.startswith("STAGIO_MPI:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None
