"""Parsing the one line a workload prints: `STAGIO_BENCH_RESULT {json}` from rank 0.

The line is the workload's own measurement (between barriers, without MPI start-up), so the
harness times runs with it rather than with the wall clock around mpiexec.
"""

import json

from . import with_iond

PREFIX = "STAGIO_BENCH_RESULT "

# Keys every result line carries (the workloads' contract); a line missing one is a failed run.
REQUIRED_KEYS = ("workload", "ranks", "params", "elapsed_s", "compute_s", "io_s", "io_calls",
                 "bytes_read", "bytes_written", "verify_errors")


class ResultLineError(ValueError):
    """The output has no usable result line; the message says why."""


def parse_result_line(stdout):
    """The result object from a run's stdout. The last result line wins (there should be one).

    Raises ResultLineError when there is none, it is not a JSON object, a required key is
    missing, or elapsed_s is not a number.
    """
    found = None
    for line in stdout.splitlines():
        position = line.find(PREFIX)
        if position >= 0:
            found = line[position + len(PREFIX):].strip()
    if found is None:
        raise ResultLineError("no STAGIO_BENCH_RESULT line in stdout")
    try:
        result = json.loads(found)
    except ValueError as error:
        raise ResultLineError(f"result line is not JSON: {error}") from None
    if not isinstance(result, dict):
        raise ResultLineError("result line is not a JSON object")
    missing = [key for key in REQUIRED_KEYS if key not in result]
    if missing:
        raise ResultLineError("result line lacks " + ", ".join(missing))
    elapsed = result["elapsed_s"]
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
        raise ResultLineError("result line's elapsed_s is not a number")
    return result


def parse_iond_line(stdout):
    """The object of the `STAGIO_IOND_RUN {json}` line with_iond.py prints after an iond-mode
    run (the daemon's shutdown, the relay's counters), or None when there is none."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(with_iond.LINE_PREFIX):
            try:
                found = json.loads(line[len(with_iond.LINE_PREFIX):])
            except ValueError:
                return None
            return found if isinstance(found, dict) else None
    return None
