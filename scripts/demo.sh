#!/usr/bin/env bash
# Sets stagio up (scripts/setup.sh) and shows it working under an unmodified MPI program.
#
#   bash scripts/demo.sh         # from any directory; about 3 minutes after the build
#
# The demo (examples/demo.c) writes a checkpoint-style shared file from 4 ranks, with a compute
# phase after each record, and reads it back through a strided view. It runs twice into a fresh
# temporary directory on emulated slow storage (stagio-emu: 5 ms per request, 200 MB/s shared,
# the benchmarks' device), once with plain MPI-IO and once with libstagio.so preloaded. Both
# output files must be identical byte for byte, and both runs must print the same checksum
# with 0 wrong bytes; otherwise the script exits non-zero. It then prints both times and what
# stagio hid. stagio runs with its default settings; STAGIO_* variables of the caller's
# environment are not passed on.
#
# Then it shows `stagio report` on the stagio run's stats (a summary, and a page with plots),
# runs the benchmark suite in quick mode (tools/stagio bench --quick all: plain MPI-IO against
# stagio on emulated slow storage) and prints its overview table.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

bash scripts/setup.sh

ranks=4
demo=$repo/build/examples/stagio_demo
library=$repo/build/libstagio.so
emulator=$repo/build/stagio-emu
emulator_shim=$repo/build/libstagio_emu.so
for built in "$demo" "$library" "$emulator" "$emulator_shim"; do
  if [[ ! -f $built ]]; then
    echo "stagio demo: $built is missing after the build" >&2
    exit 1
  fi
done

for variable in $(compgen -e); do
  if [[ $variable == STAGIO_* ]]; then unset "$variable"; fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-demo.XXXXXX")
stats=$work/stats.json

# run NAME PRELOAD [VAR=value ...]: runs the demo on $ranks ranks on emulated slow storage,
# writing $work/NAME.dat, with LD_PRELOAD=PRELOAD (colon-separated; it replaces the one
# stagio-emu gives mpiexec, so it must hold the emulator's shim) and the given variables set in
# every rank. Output goes to $work/NAME.out.
run() {
  local name=$1 preload=$2
  shift 2
  echo "stagio demo: run '$name' ($ranks ranks, emulated slow storage)"
  if ! timeout 120 "$emulator" --dir "$work" --latency-ms 5 --bandwidth-mbps 200 -- \
       mpiexec.mpich -n "$ranks" env LD_PRELOAD="$preload" "$@" "$demo" "$work/$name.dat" \
       >"$work/$name.out" 2>&1; then
    cat "$work/$name.out" >&2
    echo "stagio demo: run '$name' failed; files kept in $work" >&2
    exit 1
  fi
}

run plain "$emulator_shim"
run stagio "$library:$emulator_shim" STAGIO_SUMMARY=1 STAGIO_STATS="$stats"

failed=0
plain_sum=$(grep '^demo: checksum' "$work/plain.out" || true)
stagio_sum=$(grep '^demo: checksum' "$work/stagio.out" || true)

echo
echo "plain MPI-IO:"
grep '^demo:' "$work/plain.out" | sed 's/^/  /'
echo "under stagio:"
grep '^demo:' "$work/stagio.out" | sed 's/^/  /'
{ grep -v '^demo:' "$work/stagio.out" || true; } | sed 's/^/  /'   # stagio's own lines, rank 0
echo

if [[ -z $plain_sum || $plain_sum != "$stagio_sum" || $plain_sum != *", 0 wrong bytes" ]]; then
  echo "stagio demo: FAIL: the checksum lines differ or report wrong bytes" >&2
  failed=1
fi
if ! cmp "$work/plain.dat" "$work/stagio.dat"; then
  echo "stagio demo: FAIL: the files written with and without stagio differ" >&2
  failed=1
fi
# Without these lines libstagio.so was not in the way, and identical output would prove nothing.
if ! grep -q '^stagio: ' "$work/stagio.out" || [[ ! -s $stats ]]; then
  echo "stagio demo: FAIL: stagio printed no summary or wrote no stats; was it loaded?" >&2
  failed=1
fi

if ((failed)); then
  echo "stagio demo: files kept in $work" >&2
  exit 1
fi
size=$(stat -c %s "$work/plain.dat")
rm -f "$work/plain.dat" "$work/stagio.dat"
echo "stagio demo: OK: with and without stagio the $size-byte files are identical (cmp)" \
  "and the checksums match"
# The time each run spent writing and reading, compute phases included, from its demo line.
seconds() { sed -n 's/.* in \([0-9.]*\) s, read them back in \([0-9.]*\) s/\1 \2/p' "$1"; }
read -r plain_write plain_read <<<"$(seconds "$work/plain.out")"
read -r stagio_write stagio_read <<<"$(seconds "$work/stagio.out")"
python3 - "$plain_write" "$plain_read" "$stagio_write" "$stagio_read" <<'PY'
import sys
plain_write, plain_read, stagio_write, stagio_read = map(float, sys.argv[1:])
plain, stagio = plain_write + plain_read, stagio_write + stagio_read
print(f"stagio demo: plain MPI-IO took {plain:.2f} s to write and read back, stagio "
      f"{stagio:.2f} s ({stagio / plain:.2f}x plain's time): writes {plain_write:.2f} s -> "
      f"{stagio_write:.2f} s, reads {plain_read:.2f} s -> {stagio_read:.2f} s")
PY
echo "stagio demo: stats JSON: $stats"
echo "stagio demo: output of both runs: $work/plain.out, $work/stagio.out"

# What a user runs after a job: the report of its stats, on the terminal and as a page.
echo
echo "stagio demo: the report of the stagio run (tools/stagio report)"
if ! python3 tools/stagio report "$stats" -o "$work/report"; then
  echo "stagio demo: FAIL: stagio report failed" >&2
  exit 1
fi

# Part two: what stagio is for. The benchmark suite in quick mode (about 2.5 minutes) runs every
# workload as plain MPI-IO and under stagio, with and without prefetching, on emulated slow
# storage, and prints the overview table. Quick runs are short, so prefetching has little time
# to pay off: the committed full runs (bench/results/) are the numbers to quote.
echo
echo "stagio demo: benchmark suite, quick mode (tools/stagio bench --quick all)"
bench_out=$work/bench
if ! python3 tools/stagio bench --quick --out "$bench_out" --workdir "$work/bench-data" all \
     >"$work/bench.log" 2>&1; then
  tail -n 30 "$work/bench.log" >&2
  echo "stagio demo: FAIL: the benchmark suite failed; log in $work/bench.log" >&2
  exit 1
fi
rm -rf "$work/bench-data"
sed -n '/^## Overview/,/^## /p' "$bench_out/results.md" | sed '$d'
echo "stagio demo: benchmark results (JSON, Markdown, PNG plots): $bench_out"
echo "stagio demo: quick runs have 8 phases, too few for prefetching to pay back stagio's fixed"
echo "  cost at open and close (large under MPICH's busy polling); the full runs in"
echo "  bench/results/ (README, Benchmarks) are the numbers to quote."
