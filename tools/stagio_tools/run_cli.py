"""The `stagio run` command line: its options, their checks, and the RunPlan they make
(run_job.py runs it)."""

import argparse
import os

from . import layout
from . import run_job

DESCRIPTION = """\
Runs a command with libstagio.so preloaded (LD_PRELOAD, on the command itself: MPICH's mpiexec
passes it on to every rank). With --iond N, first starts N stagio-iond daemons on unix sockets
in a private temporary directory, serving --iond-root, and gives the ranks STAGIO_IOND naming
them; after the command, stops them (SIGTERM: each flushes its dirty data) and waits."""

EPILOG = """\
examples:
  stagio run -- mpiexec.mpich -n 4 ./app
  stagio run --iond 1 -- mpiexec.mpich -n 4 ./app
  stagio run --iond 2 --iond-arg=--cache-size=64M --keep-logs logs -- mpiexec.mpich -n 4 ./app

A daemon argument that starts with "-" must be given with "=", as above. Daemon output goes to
the terminal, each line prefixed "[iond N] ", unless --keep-logs names a directory for it.
SIGTERM and SIGHUP are passed on to the command, and so is SIGINT (the terminal's Ctrl-C
reaches it directly). Exit status: the command's (128+N if signal N ended it), 127 if it could
not be started, 2 if something the run needs is missing, or 3 if the command succeeded but a
daemon did not start, died, or failed to flush at shutdown."""


def add_subcommand(subparsers, repo_dir):
    parser = subparsers.add_parser(
        "run", help="run a command under stagio, optionally with its own stagio-iond daemons",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=layout.default_build_dir(repo_dir), metavar="DIR",
                        help="build directory with libstagio.so and stagio-iond "
                             "(default: %s)" % (layout.default_build_dir(repo_dir) or
                                                "the installed ones"))
    parser.add_argument("--iond", type=_count, default=0, metavar="N",
                        help="start N stagio-iond daemons for the command (default: none)")
    parser.add_argument("--iond-root", metavar="DIR",
                        help="the daemons' --root: they serve only files under it "
                             "(default: the current directory)")
    parser.add_argument("--iond-config", metavar="FILE", help="the daemons' --config")
    parser.add_argument("--iond-arg", action="append", default=[], metavar="ARG",
                        help="one more stagio-iond argument (repeat; --iond-arg=--x=y)")
    parser.add_argument("--keep-logs", metavar="DIR",
                        help="write daemon N's output to DIR/iond-N.log instead of the terminal")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command, after -- (e.g. mpiexec.mpich -n 4 ./app)")
    parser.set_defaults(handler=lambda args: run_job.run(make_plan(args, parser)),
                        command_line=[])
    return parser


def make_plan(args, parser):
    """The RunPlan of parsed arguments; parser.error (exit 2) on a usage error."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run (put it after --)")
    daemon_options = [name for name, value in (("--iond-root", args.iond_root),
                                               ("--iond-config", args.iond_config),
                                               ("--iond-arg", args.iond_arg),
                                               ("--keep-logs", args.keep_logs)) if value]
    if daemon_options and not args.iond:
        parser.error(f"{', '.join(daemon_options)} only with --iond N")
    return run_job.RunPlan(
        command=tuple(command), build_dir=os.path.abspath(args.build) if args.build else "", daemons=args.iond,
        root=os.path.abspath(args.iond_root or os.getcwd()),
        config=os.path.abspath(args.iond_config) if args.iond_config else "",
        daemon_args=tuple(args.iond_arg),
        keep_logs=os.path.abspath(args.keep_logs) if args.keep_logs else "")


def _count(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of daemons, 0 or more")
    return value
