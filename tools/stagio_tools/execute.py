"""Running one planned run and turning what it left behind into a record.

A run fails when its job exits non-zero, prints no usable result line, reports verify_errors,
or exceeds the time limit. A failed run is recorded, never raised: the harness carries on with
the other runs and reports the failures at the end.
"""

import os
import signal
import subprocess
import time

from . import launch
from . import resultline
from . import stats

STDERR_TAIL_LINES = 15


def run_job(command, env, timeout_s):
    """(exit status or None on timeout, stdout, stderr, wall seconds). The job gets its own
    process group so that a hung mpiexec and all its ranks can be ended together."""
    start = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True, errors="replace",
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
        status = process.returncode
    except subprocess.TimeoutExpired:
        stop_job(process)
        stdout, stderr = process.communicate()
        status = None
    except BaseException:  # Ctrl-C: do not leave ranks running behind us
        stop_job(process)
        raise
    return status, stdout, stderr, time.monotonic() - start


def stop_job(process):
    """SIGTERM to the job's process group, SIGKILL if it is still there after 5 s."""
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def remove_quietly(path):
    if path:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def execute(planned, env, timeout_s):
    """Runs `planned` (plan.PlannedRun) with launcher environment `env`; returns its record
    and, for a failed run, its full stdout and stderr (for a log file)."""
    for path in (planned.stagio_stats, planned.emulator_stats, planned.output):
        remove_quietly(path)  # left by an interrupted earlier run: must not be read as ours
    status, stdout, stderr, wall = run_job(list(planned.command), env, timeout_s)
    remove_quietly(planned.output)  # write workloads' output: only the run itself needed it
    record = {
        "workload": planned.workload.name,
        "mode": planned.mode.name,
        "ranks": planned.ranks,
        "rep": planned.rep,
        "command": launch.shell_join(planned.command),
        "exit_status": status,
        "wall_s": round(wall, 4),
        "ok": False,
        "error": None,
        "result": None,
        "stagio_stats": None,
        "emulator_stats": None,
    }
    try:
        record["result"] = resultline.parse_result_line(stdout)
    except resultline.ResultLineError as error:
        record["error"] = str(error)
    if planned.mode.iond:
        record["iond"] = resultline.parse_iond_line(stdout)
        why = (record["iond"] or {}).get("error") or \
            ("no STAGIO_IOND_RUN line" if record["iond"] is None else None)
        record["error"] = why or record["error"]
    if status is None:
        record["error"] = f"timed out after {timeout_s:.0f} s"
    elif status != 0:
        record["error"] = f"exit status {status}" + (
            f" ({record['error']})" if record["error"] else "")
    elif record["result"] is not None and record["result"].get("verify_errors"):
        record["error"] = f"{record['result']['verify_errors']} verify errors"
    record["ok"] = record["error"] is None
    _attach_stats(record, planned)
    if not record["ok"]:
        record["stderr_tail"] = stderr.splitlines()[-STDERR_TAIL_LINES:]
    return record, stdout, stderr


def _attach_stats(record, planned):
    """Reads and removes the run's stats files. A missing stats file is noted, not a failure:
    the time is still valid, only the counters are n/a."""
    notes = []
    if planned.stagio_stats:
        document, why = stats.load_json_file(planned.stagio_stats)
        if document is not None:
            record["stagio_stats"] = stats.stagio_summary(document)
        elif record["ok"]:
            notes.append(why)
    if planned.emulator_stats:
        document, why = stats.load_json_file(planned.emulator_stats)
        if document is not None:
            record["emulator_stats"] = stats.emulator_summary(document)
        elif record["ok"]:
            notes.append(why)
    for path in (planned.stagio_stats, planned.emulator_stats):
        remove_quietly(path)
    if notes:
        record["notes"] = notes
