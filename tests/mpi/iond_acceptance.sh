#!/usr/bin/env bash
# Issue 6's acceptance command, `stagio run --iond 1 -- mpiexec -n 4 ./app`, with the demo
# (examples/demo.c) as the app: the file it leaves must be byte for byte the file a plain run
# leaves. The demo reads everything back and checks it inside the job; this also checks what
# reached the disk once the daemon has shut down (SIGTERM: it flushes what it holds).
#
# usage: iond_acceptance.sh NRANKS DEMO STAGIO_COMMAND BUILD_DIR MPIEXEC
#
#   STAGIO_COMMAND  tools/stagio of the source tree; BUILD_DIR holds libstagio.so, stagio-iond
set -euo pipefail

if [[ $# -ne 5 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
fi
nranks=$1 demo=$2 stagio=$3 build=$4 mpiexec=$5
demo_args=(16 256 5)  # 16 records of 256 KiB per rank, 5 ms of compute after each

work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-iond-acceptance.XXXXXX")
keep_work=0
trap '[[ $keep_work == 1 ]] || rm -rf "$work"' EXIT
fail() {
  keep_work=1
  echo "iond_acceptance: FAILED ($1; files kept in $work)"
  exit 1
}

mkdir "$work/plain" "$work/stagio"
"$mpiexec" -n "$nranks" "$demo" "$work/plain/demo.dat" "${demo_args[@]}" > "$work/plain.out" 2>&1 ||
  { cat "$work/plain.out"; fail "the plain run"; }

# The daemon serves its working directory, as `stagio run` does by default.
(cd "$work/stagio" &&
 python3 "$stagio" run --build "$build" --iond 1 --iond-arg=--stats="$work/iond.json" \
   -- "$mpiexec" -n "$nranks" "$demo" demo.dat "${demo_args[@]}") > "$work/stagio.out" 2>&1 &&
  status=0 || status=$?
cat "$work/stagio.out"
(( status == 0 )) || fail "stagio run exited with status $status"

grep -q '^demo: checksum .*, 0 wrong bytes' "$work/stagio.out" || fail "the demo's own check"
[[ $(grep '^demo: checksum' "$work/plain.out") == $(grep '^demo: checksum' "$work/stagio.out") ]] ||
  fail "the checksums differ"
if grep -E '^stagio: warning: ' "$work/stagio.out"; then
  fail "stagio warned (the I/O-node tier must be used throughout)"
fi
cmp "$work/plain/demo.dat" "$work/stagio/demo.dat" || fail "the files differ"
written=$(python3 "$(dirname "${BASH_SOURCE[0]}")/iond_stats.py" "$work/iond.json" WriteBlocks) ||
  fail "no daemon stats"
(( written > 0 )) || fail "the daemon served no writes"
echo "iond_acceptance: passed ($written block writes through stagio-iond; files identical)"
