"""The `stagio` command: one argparse parser with a subcommand per module.

Each subcommand module has add_subcommand(subparsers), which registers its parser and sets
`handler` to a function(args) -> exit status. Adding a subcommand means writing such a
module and listing it in SUBCOMMANDS.
"""

import argparse
import os
import sys

from . import bench_cli
from . import report_cli
from . import run_cli

SUBCOMMANDS = (bench_cli, run_cli, report_cli)

# tools/stagio_tools/cli.py -> the repository root.
REPO_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_parser():
    parser = argparse.ArgumentParser(
        prog="stagio",
        description="Tools for stagio, the MPI-IO caching and prefetching library.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        module.add_subcommand(subparsers, REPO_DIR)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    # The command as typed, to be printed in the results so that they can be reproduced.
    args.command_line = [os.path.relpath(sys.argv[0]) if sys.argv and sys.argv[0] else "stagio",
                         *argv]
    return args.handler(args)
