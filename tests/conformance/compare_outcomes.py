#!/usr/bin/env python3
"""Compares what runs of one conformance program said of the rules it checks.

    compare_outcomes.py --mpi MPI --ranks N --known FILE --program NAME PLAIN NAME=DIR...
    compare_outcomes.py --mpi MPI --ranks N --known FILE --program NAME --plain-may-stop

Each run directory holds `out` (the program's stdout: "PASS|FAIL program.check[ = observed]"
lines, then "DONE program") and `status` (its exit status). PLAIN is the run under plain MPI,
the reference; each NAME=DIR is a run under stagio.

A stagio run passes when, for every check plain MPI made:
  * plain passed it: the stagio run has the same line (the same observation too);
  * plain failed it: the stagio run failed it the same way or passed it (no worse);
and, when plain ran to the end ("DONE"), the stagio run ran to the end too and made no other
check. When plain stopped early (a crash or a hang), the stagio run must have made every check
plain made before it stopped, with the rules above; what it does after is not compared.

Plain MPI breaking a rule is allowed only where FILE says that this MPI does ("known" lines);
anything else means a check is wrong or the MPI changed, and fails the test too. The early stop
of plain is the check "PROGRAM.runs_to_end".
"""

import argparse
import fnmatch
import pathlib
import sys


def read_run(directory):
    """(ordered list of (check, verdict, line), ran_to_end, exit status) of one run."""
    directory = pathlib.Path(directory)
    out = (directory / "out").read_text(errors="replace").splitlines()
    status = int((directory / "status").read_text().strip() or "-1")
    checks, done = [], False
    for line in out:
        words = line.split(" ", 2)
        if len(words) >= 2 and words[0] in ("PASS", "FAIL"):
            checks.append((words[1], words[0], line))
        elif line.startswith("DONE "):
            done = True
    return checks, done and status == 0, status


def read_known(path, mpi, ranks):
    """Patterns of checks that plain `mpi` may fail at `ranks` ranks, with the reason."""
    known = []
    for number, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split(None, 3)
        if len(fields) < 4:
            sys.exit(f"{path}:{number}: want MPI RANKS CHECK REASON, got: {line}")
        which, at, pattern, reason = fields
        if which in (mpi, "*") and (at == "*" or str(ranks) in at.split(",")):
            known.append((pattern, reason))
    return known


def known_reason(known, check):
    for pattern, reason in known:
        if fnmatch.fnmatchcase(check, pattern):
            return reason
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mpi", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--known", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--plain-may-stop", action="store_true",
                        help="only say (exit status 0) whether plain MPI is known to crash or "
                             "hang in this program, so that the runner need not wait long")
    parser.add_argument("plain", nargs="?")
    parser.add_argument("candidates", nargs="*", metavar="NAME=DIR")
    args = parser.parse_args()

    known = read_known(args.known, args.mpi, args.ranks)
    if args.plain_may_stop:
        return 0 if known_reason(known, f"{args.program}.runs_to_end") else 1
    if not args.plain or not args.candidates:
        parser.error("PLAIN and at least one NAME=DIR are needed")
    plain, plain_done, plain_status = read_run(args.plain)
    problems = []
    end_check = f"{args.program}.runs_to_end"

    # What plain MPI breaks, and whether that is known.
    broken = [(check, line) for check, verdict, line in plain if verdict == "FAIL"]
    if not plain_done:
        broken.append((end_check, f"plain MPI stopped early (exit status {plain_status})"))
    for check, line in broken:
        reason = known_reason(known, check)
        if reason:
            print(f"plain {args.mpi} breaks {check} (known: {reason})")
        else:
            problems.append(f"plain {args.mpi} breaks {check}, which is not a known "
                            f"difference at {args.ranks} ranks: {line}")
    if not plain:
        problems.append("plain MPI made no check at all")

    for candidate in args.candidates:
        name, _, directory = candidate.partition("=")
        checks, done, status = read_run(directory)
        lines = {check: (verdict, line) for check, verdict, line in checks}
        for check, verdict, line in plain:
            if check not in lines:
                problems.append(f"{name}: never made the check {check} (plain: {line})")
                continue
            their_verdict, their_line = lines[check]
            if their_line == line:
                continue
            if verdict == "FAIL" and their_verdict == "PASS":
                print(f"{name}: passes {check}, which plain MPI breaks")
                continue
            problems.append(f"{name} differs from plain MPI:\n    plain:  {line}\n"
                            f"    {name}: {their_line}")
        if plain_done:
            if not done:
                problems.append(f"{name}: did not run to the end (exit status {status}), "
                                "plain MPI did")
            extra = [check for check, _, _ in checks if check not in {c for c, _, _ in plain}]
            if extra:
                problems.append(f"{name}: made checks plain MPI did not: {', '.join(extra)}")
        passed = sum(1 for _, verdict, _ in checks if verdict == "PASS")
        print(f"{name}: {passed} of {len(checks)} checks passed"
              f"{'' if done else ', stopped early'}")

    plain_passed = sum(1 for _, verdict, _ in plain if verdict == "PASS")
    print(f"plain: {plain_passed} of {len(plain)} checks passed"
          f"{'' if plain_done else ', stopped early'}")
    if problems:
        print(f"conformance {args.program} at {args.ranks} ranks on {args.mpi}: FAILED")
        for problem in problems:
            print(f"  {problem}")
        return 1
    print(f"conformance {args.program} at {args.ranks} ranks on {args.mpi}: "
          "stagio says what plain MPI says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
