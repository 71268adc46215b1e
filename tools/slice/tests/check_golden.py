#!/usr/bin/env python3
"""Runs stagio-slice on a golden program and checks its report against the program's markers:
`/* slice: keep */` lines must be in the slice, `/* slice: drop */` lines must not, and
`/* slice: cut VAR */` says the slice is cut there for VAR (a value from communication), and
`/* refused: TEXT */` that the tool must leave the program unchanged, with TEXT in the reason.

usage: check_golden.py STAGIO_SLICE MPICC PROGRAM.c"""
import json
import re
import subprocess
import sys


def main():
    slice_tool, mpicc, program = sys.argv[1:4]
    flags = [f for f in subprocess.run([mpicc, "-show"], capture_output=True, text=True,
                                       check=True).stdout.split() if f.startswith("-I")]
    run = subprocess.run([slice_tool, program, "--report", "-", "--"] + flags,
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        print(run.stderr)
        return f"stagio-slice exited {run.returncode}"
    report = json.loads(run.stdout)
    in_slice = {entry["line"] for s in report["slices"] for entry in s["lines"]}
    cuts = {(cut["line"], cut["variable"]) for s in report["slices"] for cut in s["cuts"]}
    problems = []
    with open(program, encoding="utf-8") as source:
        refused = re.search(r"/\* refused: (.+?) \*/", source.read())
    if refused and (report["status"] != "unchanged" or refused.group(1) not in report["reason"]):
        problems.append(f"should be left unchanged because {refused.group(1)!r}; got "
                        f"{report['status']}: {report.get('reason')}")
    if not refused and report["status"] != "rewritten":
        problems.append(f"should be rewritten; left unchanged: {report.get('reason')}")
    with open(program, encoding="utf-8") as source:
        for number, text in enumerate(source, start=1):
            marker = re.search(r"/\* slice: (keep|drop|cut (\w+)) \*/", text)
            if not marker:
                continue
            if marker.group(1) == "keep" and number not in in_slice:
                problems.append(f"line {number} should be in the slice")
            if marker.group(1) == "drop" and number in in_slice:
                problems.append(f"line {number} should not be in the slice")
            if marker.group(2) and (number, marker.group(2)) not in cuts:
                problems.append(f"line {number} should cut {marker.group(2)}; cuts: {sorted(cuts)}")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
