"""Fixtures the harness tests share: a workload's result line, a run record as execute.py
makes them, and checks of a report's Markdown tables and plots."""

import os

RESULT = {"workload": "pbench", "ranks": 4, "params": {"rows": 8}, "elapsed_s": 1.25,
          "compute_s": 0.5, "io_s": 0.7, "io_calls": 32, "bytes_read": 1024,
          "bytes_written": 0, "verify_errors": 0}


def make_run(workload, mode, rep, elapsed, ok=True, stagio_stats=None, requests=None, ranks=4,
             emulator=None):
    """A run record. `requests` alone makes a minimal emulator summary; `emulator` gives a
    whole one."""
    if emulator is None and requests is not None:
        emulator = {"requests": requests}
    return {"workload": workload, "mode": mode, "ranks": ranks, "rep": rep, "ok": ok,
            "error": None if ok else "exit status 1",
            "result": dict(RESULT, elapsed_s=elapsed, ranks=ranks) if ok else None,
            "stagio_stats": stagio_stats, "emulator_stats": emulator}


def png_names(paths):
    """The base names, sorted, of those of `paths` that are PNG files."""
    names = []
    for path in paths:
        with open(path, "rb") as stream:
            if stream.read(8) == b"\x89PNG\r\n\x1a\n":
                names.append(os.path.basename(path))
    return sorted(names)


def table_shape_errors(text):
    """The rows of the Markdown tables in `text` that do not have their header's columns or
    do not end with "|" (empty when every table is well formed)."""
    errors, columns = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            columns = None
            continue
        if not line.endswith("|"):
            errors.append(line)
        if columns is None:
            columns = line.count("|")
        elif line.count("|") != columns:
            errors.append(line)
    return errors
