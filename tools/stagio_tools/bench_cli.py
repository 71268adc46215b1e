"""The `stagio bench` command line: options, their checks, and the BenchConfig they make."""

import argparse
import os

from . import bench
from . import bench_config
from . import launch
from . import modes as mode_table
from . import workloads as table

DEFAULT_REPS = 5
DEFAULT_WORKDIR = "/tmp/stagio-bench"

DESCRIPTION = """\
Runs benchmark workloads on emulated slow storage (stagio-emu) in four modes, interleaved
(for each rep: for each workload: for each mode):
  ideal            --skip-io without stagio: the compute-only bound T_ideal
  plain            plain MPI-IO under the emulator: the baseline T_plain
  stagio           libstagio.so preloaded, STAGIO_PREFETCH=none
  stagio-prefetch  libstagio.so preloaded, STAGIO_PREFETCH=auto
and writes results.json, results.md, times.png and overlap.png to --out."""

EPILOG = """\
workloads (or `all`):
{table}

A full `all` run (5 reps, 9 workloads, 4 modes = 180 runs) takes 12-15 minutes on 2 cores;
--quick runs 8 phases per workload instead of ~100, still 5 reps, in about 2.5 minutes. Other STAGIO_*
variables in the environment reach every stagio run (and are recorded in results.json).
Exit status: 0 when every run succeeded, 1 when some failed (listed at the end), 2 when the
benchmark could not start."""


def _workload_lines():
    return "\n".join(f"  {w.name:<15} {w.description}" for w in table.WORKLOADS)


def add_subcommand(subparsers, repo_dir):
    parser = subparsers.add_parser(
        "bench", help="run the benchmark workloads and report plain MPI-IO vs stagio",
        description=DESCRIPTION, epilog=EPILOG.format(table=_workload_lines()),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="+", metavar="WORKLOAD",
                        help="workload names, or `all`")
    parser.add_argument("--quick", action="store_true",
                        help="8 phases per workload instead of ~100: a check of the pipeline")
    parser.add_argument("--reps", type=_positive_int, default=DEFAULT_REPS,
                        help="runs per workload and mode (default %(default)s; the report "
                             "needs >= 5 for meaningful medians)")
    parser.add_argument("--ranks", type=_positive_int, default=4,
                        help="MPI ranks per run (default %(default)s)")
    parser.add_argument("--mpi", choices=sorted(launch.LAUNCHERS), default="mpich",
                        help="MPI implementation the build uses (default %(default)s)")
    parser.add_argument("--build", default=os.path.join(repo_dir, "build"), metavar="DIR",
                        help="build directory with libstagio.so, stagio-emu and bench/ "
                             "(default: %(default)s)")
    parser.add_argument("--out", default=os.path.join(repo_dir, "bench", "results", "latest"),
                        metavar="DIR", help="where the results go (default: %(default)s)")
    parser.add_argument("--workdir", default=DEFAULT_WORKDIR, metavar="DIR",
                        help="data files and scratch space, created (default: %(default)s)")
    parser.add_argument("--latency-ms", type=_non_negative_float, default=5.0,
                        help="emulated latency per storage request (default %(default)s)")
    parser.add_argument("--bandwidth-mbps", type=_positive_float, default=200.0,
                        help="emulated shared bandwidth, MB/s (default %(default)s)")
    parser.add_argument("--parallel", type=_parallel, default=8,
                        help="emulated requests in parallel, 1-64 (default %(default)s)")
    parser.add_argument("--compute-ms", type=_non_negative_float, default=None, metavar="X",
                        help="compute time per phase for every workload, overriding the table")
    parser.add_argument("--busy", action="store_true",
                        help="compute phases spin instead of sleeping (shows CPU overhead)")
    parser.add_argument("--modes", type=_mode_list, default=list(mode_table.MODES),
                        metavar="M,M,...",
                        help="a subset of " + ",".join(mode_table.MODE_NAMES) + " (default: all)")
    parser.add_argument("--timeout", type=_positive_float, default=600.0, metavar="S",
                        help="a run taking longer is stopped and failed (default %(default)s)")
    parser.set_defaults(handler=lambda args: _run(args, repo_dir))
    return parser


def _run(args, repo_dir):
    config = bench_config.BenchConfig(
        workloads=_resolve_workloads(args.workloads), modes=args.modes, reps=args.reps,
        ranks=args.ranks, mpi=args.mpi, build_dir=os.path.abspath(args.build),
        out_dir=os.path.abspath(args.out), work_dir=os.path.abspath(args.workdir),
        device=launch.Device(args.latency_ms, args.bandwidth_mbps, args.parallel),
        quick=args.quick, busy=args.busy, compute_ms=args.compute_ms, timeout_s=args.timeout,
        command_line=args.command_line)
    return bench.run(config, repo_dir)


def _resolve_workloads(names):
    """Workload rows in table order, without repeats; `all` means every one."""
    if "all" in names:
        return list(table.WORKLOADS)
    unknown = [n for n in names if n not in table.WORKLOAD_NAMES]
    if unknown:
        raise SystemExit(f"stagio bench: unknown workload {', '.join(unknown)}; "
                         f"choose from {', '.join(table.WORKLOAD_NAMES)} or all")
    return [w for w in table.WORKLOADS if w.name in names]


def _mode_list(text):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in mode_table.MODE_NAMES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"{text!r}: modes are {', '.join(mode_table.MODE_NAMES)}, comma-separated")
    return [m for m in mode_table.MODES if m.name in names]


def _number(kind, check, what):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not check(value):
            raise argparse.ArgumentTypeError(f"{text!r}: must be {what}")
        return value
    return parse


_positive_int = _number(int, lambda v: v > 0, "a positive integer")
_parallel = _number(int, lambda v: 1 <= v <= 64, "1 to 64")
_positive_float = _number(float, lambda v: v > 0, "> 0")
_non_negative_float = _number(float, lambda v: v >= 0, ">= 0")
