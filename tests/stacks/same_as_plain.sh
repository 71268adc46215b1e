#!/usr/bin/env bash
# A program of an I/O stack (HDF5, mpi4py, Fortran), plain and under stagio: the same output,
# the same file, byte for byte, and stagio must have served its MPI-IO calls.
#
#   same_as_plain.sh [--bypassed] MPIEXEC LIBSTAGIO RANKS PROGRAM [ARGS...]
#
# The program gets one more argument, the file to write (it prints what it read and checks
# it). It runs once with plain MPI-IO and once with LD_PRELOAD=LIBSTAGIO and STAGIO_STATS, in
# two directories; the outputs and the files must be identical. The stats must show calls
# stagio served itself (not passed to PMPI), so that a stack whose calls go around stagio
# fails here instead of passing as plain MPI-IO twice.
#
# --bypassed turns the last check around, for a stack known to call the MPI library's own
# PMPI functions (Fortran bindings that libstagio does not define): stagio must then have
# served nothing, so the test fails, and is to be changed, when that stops being true.
set -euo pipefail

expect=served
if [[ ${1:-} == --bypassed ]]; then
  expect=bypassed
  shift
fi
mpiexec=$1 library=$2 ranks=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-stack-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/plain" "$work/stagio"

timeout 300 "$mpiexec" -n "$ranks" "$@" "$work/plain/data" >"$work/plain/out" 2>&1 ||
  { echo "same_as_plain: the plain run failed" >&2; cat "$work/plain/out" >&2; exit 1; }
timeout 300 "$mpiexec" -n "$ranks" env LD_PRELOAD="$library" STAGIO_STATS="$work/stats.json" \
  "$@" "$work/stagio/data" >"$work/stagio/out" 2>&1 ||
  { echo "same_as_plain: the run under stagio failed" >&2; cat "$work/stagio/out" >&2; exit 1; }

cat "$work/stagio/out"
if ! diff "$work/plain/out" "$work/stagio/out" >&2; then
  echo "same_as_plain: the outputs differ (plain <, stagio >)" >&2
  exit 1
fi
cmp "$work/plain/data" "$work/stagio/data" ||
  { echo "same_as_plain: the files differ" >&2; exit 1; }
python3 - "$work/stats.json" "$expect" <<'PYTHON'
import json, os, sys
path, expect = sys.argv[1:]
# No stats file: stagio never saw MPI_Init, so it served nothing.
total = json.load(open(path))["total"] if os.path.exists(path) else {"calls": {}}
calls = sum(kind["calls"] for kind in total["calls"].values())
served = calls - total.get("passthrough_calls", 0)
if expect == "served" and served <= 0:
    sys.exit(f"same_as_plain: stagio served none of the program's {calls} MPI-IO calls")
if expect == "bypassed" and served > 0:
    sys.exit(f"same_as_plain: stagio served {served} calls of a stack said to bypass it: "
             "drop --bypassed for this test, and say so in the README")
if expect == "served":
    print(f"same_as_plain: identical; stagio served {served} of {calls} MPI-IO calls, "
          f"{total['cache_hits']} cache hits")
else:
    print("same_as_plain: identical; the calls bypassed stagio, as expected")
PYTHON
