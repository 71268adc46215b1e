"""The runs of a benchmark, in the order they execute, as ready-to-run commands.

Order: for each rep, for each rank count, for each workload, for each mode. Interleaving
spreads slow moments of the machine over all modes instead of letting one mode's five reps
absorb them; and each rep of a workload at a rank count sees its modes back to back, under the
same conditions.
"""

from dataclasses import dataclass
import os
import sys

from . import launch
from . import with_iond
from . import workloads as table


@dataclass(frozen=True)
class PlannedRun:
    workload: object         # Workload
    mode: object             # Mode
    ranks: int
    rep: int                 # 1-based
    command: tuple
    stagio_stats: str        # path stagio writes its stats to, "" when stagio is not loaded
    emulator_stats: str      # path stagio-emu writes to, "" when not emulated
    output: str              # file the workload writes, deleted after the run; "" for none

    @property
    def key(self):
        """What the runs of one measured case share: the reps of a workload, rank count, mode."""
        return (self.workload.name, self.ranks, self.mode.name)


def workload_argv(config, workload, mode, program):
    """The workload's own command line for one mode (no launcher, no environment)."""
    argv = [program, *workload.parameters(config.quick)]
    input_file = table.input_path(config.data_dir, workload, config.quick, config.input_ranks)
    output = table.output_path(config.data_dir, workload, mode.name)
    if workload.reads_input:
        argv += ["--file", input_file]
    if workload.output_option:
        argv += [workload.output_option, output]
    argv += ["--compute-ms", launch.plain_number(config.compute_ms_for(workload))]
    if config.busy:
        argv.append("--busy")
    if mode.skip_io:
        argv.append(workload.ideal_option)
    elif workload.verify_option:
        argv.append(workload.verify_option)
    return argv


def emulated(workload, mode):
    """Whether the run goes under stagio-emu: the modes that do I/O, and the ideal mode of a
    workload whose ideal still writes (--skip-reads), so that its writes cost what they cost in
    the other modes."""
    return mode.emulated or (mode.skip_io and workload.ideal_option != table.SKIP_IO)


def rank_environment(workload, mode, artifacts, stagio_stats):
    """What the ranks need beyond the launcher's environment. LD_PRELOAD is set explicitly in
    every emulated mode: stagio-emu gave the launcher its shim in LD_PRELOAD, and a stagio mode
    must replace that with both libraries. A program linked to stagio has it loaded in every
    mode: the modes without stagio turn it off (STAGIO_DISABLE=1)."""
    env = {}
    is_emulated = emulated(workload, mode)
    if is_emulated or mode.stagio:
        preload = ([artifacts.libstagio] if mode.stagio else []) + \
            ([artifacts.libemu] if is_emulated else [])
        env["LD_PRELOAD"] = ":".join(preload)
    if workload.links_stagio and not mode.stagio:
        env["STAGIO_DISABLE"] = "1"
    if mode.stagio:
        env["STAGIO_STATS"] = stagio_stats
        env["STAGIO_PREFETCH"] = mode.prefetch
        env.update(mode.settings)
        env.update(workload.stagio_settings)
    return env


def plan_runs(config, artifacts):
    """Every run, reps outermost and modes interleaved. Every other rep runs the modes in
    reverse order, so that no mode always runs right after the same one, and whatever one run
    leaves behind (dirty pages, a page cache to refill) does not always fall on the same mode."""
    runs = []
    for rep in range(1, config.reps + 1):
        modes_in_order = config.modes if rep % 2 == 1 else list(reversed(config.modes))
        for ranks in config.rank_counts:
            for workload in (w for w in config.workloads if w.runs_at(ranks)):
                for mode in modes_in_order:
                    runs.append(_planned_run(config, artifacts, workload, mode, ranks, rep))
    return runs


def run_stem(workload_name, ranks, mode_name, rep):
    """"topk.4.plain.1": names a run's stats and log files."""
    return f"{workload_name}.{ranks}.{mode_name}.{rep}"


def _planned_run(config, artifacts, workload, mode, ranks, rep):
    program = table.program_path(config.build_dir, workload)
    stem = os.path.join(config.scratch_dir, run_stem(workload.name, ranks, mode.name, rep))
    stagio_stats = stem + ".stagio.json" if mode.stagio else ""
    emulator_stats = stem + ".emu.json" if emulated(workload, mode) else ""
    environment = rank_environment(workload, mode, artifacts, stagio_stats)
    if mode.every_rank_aggregates:
        environment["STAGIO_AGGREGATORS"] = str(ranks)
    if mode.iond:
        environment["STAGIO_IOND"] = with_iond.ADDRESS_TOKEN  # the relay's, known at run time
    command = launch.mpi_command(config.mpi, ranks, environment,
                                 workload_argv(config, workload, mode, program))
    if mode.iond:
        # The daemon's storage requests are the run's (emulator_stats); the application's
        # own, which should be none, are kept apart.
        app_stats = stem + ".app-emu.json"
        command = launch.emulated_command(artifacts.emulator, config.data_dir, app_stats,
                                          config.device_for(workload), command, config.link)
        command = iond_command(config, artifacts, workload, mode, stem, emulator_stats,
                               app_stats, command)
    elif emulated(workload, mode):
        command = launch.emulated_command(artifacts.emulator, config.data_dir, emulator_stats,
                                          config.device_for(workload), command, config.link)
    output = table.output_path(config.data_dir, workload, mode.name) \
        if workload.output_option else ""
    return PlannedRun(workload, mode, ranks, rep, tuple(command), stagio_stats, emulator_stats,
                      output)


def iond_command(config, artifacts, workload, mode, stem, iond_stats, app_stats, command):
    """`command` run by with_iond.py against a stagio-iond of its own behind stagio-link."""
    device = config.device_for(workload)
    link = config.link or launch.Link(0, 0)
    wrapper = [sys.executable, os.path.abspath(with_iond.__file__),
               "--emulator", artifacts.emulator, "--iond", artifacts.iond,
               "--link", artifacts.link, "--data-dir", config.data_dir, "--scratch", stem,
               "--latency-ms", launch.plain_number(device.latency_ms),
               "--bandwidth-mbps", launch.plain_number(device.bandwidth_mbps),
               "--parallel", str(device.parallel),
               "--seek-ms", launch.plain_number(device.seek_ms),
               "--link-latency-ms", launch.plain_number(link.latency_ms),
               "--link-bandwidth-mbps", launch.plain_number(link.bandwidth_mbps),
               "--iond-stats", iond_stats, "--app-emu-stats", app_stats]
    # "--iond-arg=--cache-size": the = keeps argparse from taking the value for an option.
    wrapper += [f"--iond-arg={arg}" for arg in (*config.iond_args, *mode.iond_args)]
    if mode.segstore:
        wrapper.append("--segstore")
    return wrapper + ["--"] + list(command)


def create_input_command(config, workload):
    """Makes the workload's input with plain POSIX on 1 rank, no emulator, no stagio, sized for
    the largest rank count (--ranks). Idempotent: an existing right-sized file is kept."""
    program = table.program_path(config.build_dir, workload)
    argv = [program, *workload.parameters(config.quick),
            "--file", table.input_path(config.data_dir, workload, config.quick,
                                       config.input_ranks),
            "--create-input", "--ranks", str(config.input_ranks)]
    return launch.mpi_command(config.mpi, 1, {}, argv)
