"""The `stagio bench` command line: options, their checks, and the BenchConfig they make."""

import argparse
import dataclasses
import os
import textwrap

from . import bench
from . import bench_config
from . import iond_modes
from . import launch
from . import modes as mode_table
from . import suites
from . import workloads as table

DEFAULT_WORKDIR = "/tmp/stagio-bench"

DESCRIPTION = """\
Runs benchmark workloads on emulated slow storage (stagio-emu) in several modes, interleaved
(for each rep: for each rank count: for each workload: for each mode):
{modes}
and writes results.json, results.md and PNG plots to --out. A suite (--suite) chooses the
workloads (`all`), modes, rank counts and the form of the report:
{suites}"""

EPILOG = """\
workloads:
{table}

The default suite's `all` (5 reps, 9 workloads, 4 modes = 180 runs) takes 12-15 minutes on 2
cores; --quick runs 8 phases per workload instead of ~100, still 5 reps, in about 2.5 minutes.
`--suite collective` (no workload names needed) runs 4 workloads x 4 modes x 4 rank counts x 5
reps = 320 runs of 24 phases, about 25 minutes with MPICH and 15 with Open MPI; its --quick, 8
phases at 2 and 4 ranks, about 3 minutes. `--suite preexec` runs the pre-execution examples
(built to <build>/examples/) at 1, 2, 4 and 8 ranks in 5 modes, 3 reps: 360 runs, ~25
minutes; its --quick (16 steps, 1 and 2 ranks, 1 rep) under a minute. `--suite iond` runs
SimParIO and BTIO (4 and 8 ranks) in plain, client and iond modes across an emulated link (60
runs, about 15 minutes; --quick about a minute); it needs <build>/stagio-iond and stagio-link;
--link-bottleneck makes the link slower than the device. `--suite iond-sweep` runs SimParIO
writes at 42 settings of the client and daemon (3 reps, about 13 minutes). `--suite node` runs
interleaved records that the ranks' blocks share on a 40 MB/s device, at 2 and 4 ranks in 6
modes, 3 reps (about 4 minutes). Other STAGIO_* variables
in the environment reach every stagio run (and are recorded in results.json).
Exit status: 0 when every run succeeded, 1 when some failed (listed at the end), 2 when the
benchmark could not start."""


def _help_lines(rows, width):
    """Two columns, the second wrapped to the width of the rest of the help."""
    return "\n".join(textwrap.fill(text, 92, initial_indent=f"  {name:<{width}} ",
                                   subsequent_indent=" " * (width + 3))
                     for name, text in rows)


def _suite_of_workload(name):
    return next((s.name for s in suites.SUITES if name in s.workloads), "")


def _described_modes():
    """Every mode's line, the sweep's points folded into one."""
    rows = [(m.name, m.description) for m in mode_table.MODES
            if iond_modes.sweep_point(m.name) is None]
    return rows + [("iond-wb-*, iond-cache-*",
                    "the iond-sweep suite's points: iond with the client's and daemon's high "
                    "water marks (iond-wb-c<client %>-d<daemon %>) or cache sizes "
                    "(iond-cache-c<client>-d<daemon>)")]


def _folded(mode_names):
    """"plain, client, iond-wb-*, iond-cache-*": the sweep's points as their two patterns."""
    shown = [n for n in mode_names if iond_modes.sweep_point(n) is None]
    if len(shown) < len(mode_names):
        shown.append("the iond-wb-* and iond-cache-* points")
    return ", ".join(shown)


def _description():
    return DESCRIPTION.format(
        modes=_help_lines(_described_modes(), 17),
        suites=_help_lines([(s.name, f"{s.description}; modes {_folded(s.modes)}")
                            for s in suites.SUITES], 17))


def _epilog():
    return EPILOG.format(table=_help_lines(
        [(w.name, f"[{_suite_of_workload(w.name)}] {w.description}") for w in table.WORKLOADS],
        15))


def add_subcommand(subparsers, repo_dir):
    parser = subparsers.add_parser(
        "bench", help="run the benchmark workloads and report plain MPI-IO vs stagio",
        description=_description(), epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", metavar="WORKLOAD",
                        help="workload names, or `all` (the suite's); the collective suite "
                             "runs all of its own when none is named")
    parser.add_argument("--suite", choices=suites.SUITE_NAMES, default=suites.DEFAULT_SUITE,
                        help="which workloads `all` means, the default modes and rank counts, "
                             "and the report (default %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="8 phases per workload instead of ~100: a check of the pipeline; "
                             "the collective suite also runs only its small rank counts, the "
                             "preexec suite 16 steps at 1 and 2 ranks, 1 rep")
    parser.add_argument("--reps", type=_positive_int, default=None,
                        help="runs per workload and mode (default: the suite's: 5; the "
                             "preexec suite 3, or 1 with --quick; the report needs >= 5 for "
                             "meaningful medians)")
    ranks = parser.add_mutually_exclusive_group()
    ranks.add_argument("--ranks", type=_positive_int, default=None,
                       help="MPI ranks per run (default: the suite's, 4 for the default suite)")
    ranks.add_argument("--ranks-list", type=_rank_list, default=None, metavar="N,N,...",
                       help="run every workload and mode at each of these rank counts (default: "
                            "the suite's, 2,4,8,16 for the collective suite, 2,4 with --quick)")
    parser.add_argument("--mpi", choices=sorted(launch.LAUNCHERS), default="mpich",
                        help="MPI implementation the build uses (default %(default)s)")
    parser.add_argument("--build", default=os.path.join(repo_dir, "build"), metavar="DIR",
                        help="build directory with libstagio.so, stagio-emu and bench/ "
                             "(default: %(default)s)")
    parser.add_argument("--out", default=os.path.join(repo_dir, "bench", "results", "latest"),
                        metavar="DIR", help="where the results go (default: %(default)s)")
    parser.add_argument("--workdir", default=DEFAULT_WORKDIR, metavar="DIR",
                        help="data files and scratch space, created (default: %(default)s)")
    # The device's defaults are the suite's; a workload defined with its own device (the
    # preexec suite's saturated rows) keeps it whatever these say.
    parser.add_argument("--latency-ms", type=_non_negative_float, default=None,
                        help="emulated latency per storage request (default 5)")
    parser.add_argument("--bandwidth-mbps", type=_positive_float, default=None,
                        help="emulated shared bandwidth, MB/s (default 200)")
    parser.add_argument("--parallel", type=_parallel, default=None,
                        help="emulated requests in parallel, 1-64 (default: the suite's, 8; 32 "
                             "for the preexec suite)")
    parser.add_argument("--seek-ms", type=_non_negative_float, default=None,
                        help="emulated seek per request, which no other request's overlaps "
                             "(default: the suite's, 0; 4 for the segstore suite)")
    parser.add_argument("--link-bottleneck", action="store_true",
                        help="iond suites: a link slower than the device (1 ms, 50 MB/s) "
                             "instead of the default one (1 ms, 400 MB/s)")
    parser.add_argument("--compute-ms", type=_non_negative_float, default=None, metavar="X",
                        help="compute time per phase for every workload, overriding the table")
    parser.add_argument("--busy", action="store_true",
                        help="compute phases spin instead of sleeping (shows CPU overhead)")
    parser.add_argument("--modes", type=_mode_list, default=None, metavar="M,M,...",
                        help="some of " + ",".join(mode_table.MODE_NAMES) +
                             " (default: the suite's)")
    parser.add_argument("--timeout", type=_positive_float, default=600.0, metavar="S",
                        help="a run taking longer is stopped and failed (default %(default)s)")
    # cli.main replaces command_line with the command as typed.
    parser.set_defaults(handler=lambda args: _run(args, repo_dir), command_line=[])
    return parser


def _run(args, repo_dir):
    return bench.run(make_config(args), repo_dir)


def make_config(args):
    """The BenchConfig of parsed arguments: the suite fills in what the command line left."""
    suite = suites.suite_by_name(args.suite)
    modes = args.modes or [mode_table.mode_by_name(name) for name in suite.modes]
    reps = args.reps or (suite.quick_reps if args.quick else suite.reps)
    given = {"latency_ms": args.latency_ms, "bandwidth_mbps": args.bandwidth_mbps,
             "parallel": args.parallel, "seek_ms": args.seek_ms}
    device = dataclasses.replace(suite.device,
                                 **{k: v for k, v in given.items() if v is not None})
    return bench_config.BenchConfig(
        workloads=resolve_workloads(args.workloads, suite), modes=modes, reps=reps,
        rank_counts=resolve_rank_counts(args, suite), mpi=args.mpi,
        build_dir=os.path.abspath(args.build), out_dir=os.path.abspath(args.out),
        work_dir=os.path.abspath(args.workdir), device=device,
        quick=args.quick, busy=args.busy, compute_ms=args.compute_ms, timeout_s=args.timeout,
        command_line=args.command_line, suite=suite.name,
        link=suite.bottleneck_link if args.link_bottleneck else suite.link,
        iond_args=suite.iond_args)


def resolve_workloads(names, suite):
    """Workload rows in table order, without repeats; `all` means every one of the suite's.
    The default suite wants them named (`all` at least), as it always has; the others run all
    of theirs when none is named."""
    if not names and suite.name == suites.DEFAULT_SUITE:
        raise SystemExit("stagio bench: name the workloads to run, or all")
    if not names or "all" in names:
        return [w for w in table.WORKLOADS if w.name in suite.workloads]
    unknown = [n for n in names if n not in table.WORKLOAD_NAMES]
    if unknown:
        raise SystemExit(f"stagio bench: unknown workload {', '.join(unknown)}; "
                         f"choose from {', '.join(table.WORKLOAD_NAMES)} or all")
    return [w for w in table.WORKLOADS if w.name in names]


def resolve_rank_counts(args, suite):
    if args.ranks_list:
        return tuple(args.ranks_list)
    if args.ranks:
        return (args.ranks,)
    return suite.quick_rank_counts if args.quick else suite.rank_counts


def _mode_list(text):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in mode_table.MODE_NAMES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"{text!r}: modes are {', '.join(mode_table.MODE_NAMES)}, comma-separated")
    return [m for m in mode_table.MODES if m.name in names]


def _rank_list(text):
    """"2,4,8,16" -> [2, 4, 8, 16]: positive, without repeats, in the order given."""
    try:
        counts = [int(n) for n in text.split(",") if n.strip()]
    except ValueError:
        counts = []
    if not counts or any(c <= 0 for c in counts):
        raise argparse.ArgumentTypeError(f"{text!r}: positive rank counts, comma-separated")
    return list(dict.fromkeys(counts))


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
