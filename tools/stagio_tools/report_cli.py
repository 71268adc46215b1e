"""The `stagio report` command line: reads one stats file (or two, to compare them), prints the
summary and writes the HTML page with its plots."""

import argparse
import os
import sys

from .job_report import advice
from .job_report import job as job_stats
from .job_report import text

DESCRIPTION = """\
Summarizes a job's stats file (the one STAGIO_STATS named) on the terminal and writes an HTML
page with plots: where the time went, the bytes each tier moved, prefetching's outcome, each
file and rank, what stagio could not help with, and a one-line verdict. With two stats files,
compares them side by side (a run with STAGIO_CACHE=disable against a stagio run, or two
settings)."""

EPILOG = """\
examples:
  STAGIO_STATS=stats.json mpiexec -n 4 env LD_PRELOAD=libstagio.so ./app
  stagio report stats.json                  # summary, and stagio-report/report.html
  stagio report stats.json -o report-dir
  stagio report plain.json stagio.json      # A against B

Exit status: 0, or 2 if a stats file cannot be read or the page cannot be written."""

# Debian's python3-matplotlib and python3-jinja2 belong to this interpreter; another python3
# found first on PATH (a pyenv or venv one) may not have them.
SYSTEM_PYTHON = "/usr/bin/python3"


def add_subcommand(subparsers, repo_dir):
    parser = subparsers.add_parser(
        "report", help="summarize a job's stagio stats file and write an HTML page",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stats", nargs="+", metavar="STATS.json",
                        help="the job's stats file; two to compare them")
    parser.add_argument("-o", "--out", default="stagio-report", metavar="DIR",
                        help="directory for report.html and its plots (default: %(default)s)")
    parser.add_argument("--no-page", action="store_true",
                        help="print the summary only; write no page")
    parser.set_defaults(handler=lambda args: run(args, parser), command_line=[])
    return parser


def run(args, parser):
    if len(args.stats) > 2:
        parser.error("one stats file, or two to compare")
    try:
        jobs = [job_stats.load(path) for path in args.stats]
    except job_stats.StatsError as error:
        print(f"stagio report: {error}", file=sys.stderr)
        return 2
    page = None
    if not args.no_page:
        if not _can_draw():
            return _again_with_system_python()
        try:
            os.makedirs(args.out, exist_ok=True)
            page = _write_page(jobs, args.out)
        except OSError as error:
            print(f"stagio report: cannot write the page in {args.out}: {error}",
                  file=sys.stderr)
            return 2
    if len(jobs) == 2:
        print(text.comparison(*jobs, page_path=page))
    else:
        print(text.summary(jobs[0], advice.findings(jobs[0]), page_path=page))
    return 0


def _write_page(jobs, out_dir):
    from .job_report import page
    if len(jobs) == 2:
        return page.write_comparison_page(*jobs, out_dir)
    return page.write_job_page(jobs[0], advice.findings(jobs[0]), out_dir)


def _can_draw():
    try:
        import jinja2  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _again_with_system_python():
    missing = "matplotlib and jinja2 (python3-matplotlib, python3-jinja2)"
    if os.path.realpath(sys.executable) == os.path.realpath(SYSTEM_PYTHON) or \
            not os.access(SYSTEM_PYTHON, os.X_OK) or os.environ.get("STAGIO_REPORT_REEXEC"):
        print(f"stagio report: the page needs {missing}, which {sys.executable} cannot import; "
              "install them, or use --no-page", file=sys.stderr)
        return 2
    script = os.path.realpath(sys.argv[0])
    os.environ["STAGIO_REPORT_REEXEC"] = "1"
    os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, script, *sys.argv[1:]])
    return 2  # not reached
