#!/usr/bin/env bash
# Mode check of one pre-execution example: the helper thread must change when data arrives,
# never what the program computes.
#
#   check_modes.sh MPIEXEC BINARY RANKS RUN...
#
# RANKS is a comma-separated list of job sizes; each RUN is a string of the example's options
# ("{dir}" stands for the scratch directory). For each job size and RUN: create a tiny input
# (--create-input), then run the example in every mode:
#   plain  STAGIO_DISABLE=1: every call goes straight to MPI, stagio_preexec_start starts nothing
#   off    stagio's cache, STAGIO_PREEXEC=off: no helper
#   pp     a helper runs the slice, competing with the main thread's I/O
#   ppis   a helper runs the slice, pausing while the main thread is in an I/O call
# Every run must exit 0 and print one result line with "verify_errors": 0 and the same
# "result" as the plain run. Small cache blocks (STAGIO_BLOCK_SIZE=4K) make the tiny accesses
# span several blocks and share blocks between ranks.
#
# The ppis runs on 1 rank also write stagio's stats. Once the stats have pre-execution counters
# (names starting with "preexec_"), they must show that the helper prefetched
# (preexec_calls > 0 or prefetch_issued > 0 over the job) and that stagio dropped none of the
# slice's calls (preexec_dropped 0: a well-formed slice names only open files and valid ranges).
# With STAGIO_CHECK_HELPER_CALLS=1 (the generated helpers' checks) the helper itself must have
# made calls: prefetches of stagio's pattern prefetching do not count.
set -euo pipefail
mpiexec=$1 binary=$2 rank_list=$3
shift 3
work=$(mktemp -d /tmp/stagio-preexec-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
name=$(basename "$binary")
failures=0

fail() {
  echo "FAIL: $name $*"
  sed 's/^/  | /' "$work/command" "$work/out" "$work/err"
  failures=$((failures + 1))
}

# The stats check; prints what it found, exits 1 if the helper fetched nothing.
check_stats() {
  python3 - "$1" <<'PY'
import json, os, sys
total = json.load(open(sys.argv[1]))["total"]
names = sorted(key for key in total if key.startswith("preexec_"))
if not names:
    print("    stats: no preexec_ counters yet, helper check skipped")
    sys.exit(0)
calls, issued = total.get("preexec_calls", 0), total.get("prefetch_issued", 0)
print(f"    stats: preexec_calls {calls}, prefetch_issued {issued}, "
      + ", ".join(f"{key} {total[key]}" for key in names if key != "preexec_calls"))
if os.environ.get("STAGIO_CHECK_HELPER_CALLS") == "1":
    # The helper itself made calls (on time or late), not only pattern prefetching.
    ok = calls + total.get("preexec_skipped_lagging", 0) > 0
else:
    ok = calls > 0 or issued > 0
sys.exit(0 if ok and total.get("preexec_dropped", 0) == 0 else 1)
PY
}

IFS=, read -r -a rank_counts <<<"$rank_list"
for ranks in "${rank_counts[@]}"; do
  for run in "$@"; do
    # Split on any white space, newlines included, so that a RUN may span lines.
    read -r -d '' -a options <<<"${run//\{dir\}/$work}" || true
    run=${options[*]}
    rm -rf "${work:?}"/*
    command=("$mpiexec" -n 1 "$binary" --file "$work/data" --ranks "$ranks" --create-input
             "${options[@]}")
    echo "run: ${command[*]}" >"$work/command"
    "${command[@]}" >"$work/out" 2>"$work/err" || { fail "--create-input $run"; continue; }
    reference=""
    for mode in plain off pp ppis; do
      # Outputs of the previous mode must not pass for this one's.
      find "$work" -mindepth 1 ! -name data ! -name out ! -name err ! -name command \
          -exec rm -rf {} +
      settings=(STAGIO_BLOCK_SIZE=4K)
      if [ "$mode" = plain ]; then
        settings+=(STAGIO_DISABLE=1)
      else
        settings+=(STAGIO_PREEXEC=$mode)
      fi
      stats=""
      if [ "$mode" = ppis ] && [ "$ranks" = 1 ]; then
        stats=$work/stats.json
        settings+=(STAGIO_STATS="$stats")
      fi
      what="$run, $ranks rank(s), $mode"
      command=("$mpiexec" -n "$ranks" env "${settings[@]}" "$binary" --file "$work/data"
               --compute-ms 2 "${options[@]}")
      echo "run: ${command[*]}" >"$work/command"
      if ! "${command[@]}" >"$work/out" 2>"$work/err"; then
        fail "$what: exit status non-zero"; continue
      fi
      line=$(grep '^STAGIO_BENCH_RESULT ' "$work/out" || true)
      if [ "$(grep -c '^STAGIO_BENCH_RESULT ' "$work/out")" != 1 ] || \
         [[ "$line" != *'"verify_errors": 0'* ]]; then
        fail "$what: no single result line with verify_errors 0"; continue
      fi
      result=$(sed -n 's/.*"result": //p' <<<"$line")
      if [ -z "$result" ]; then
        fail "$what: no result"; continue
      fi
      [ "$mode" = plain ] && reference=$result
      if [ "$result" != "$reference" ]; then
        fail "$what: result $result differs from plain MPI-IO's $reference"; continue
      fi
      echo "ok: $name $what: $result"
      if [ -n "$stats" ] && ! check_stats "$stats"; then
        fail "$what: the helper prefetched nothing, or calls of the slice were dropped"
      fi
    done
  done
done
[ "$failures" = 0 ] || { echo "$failures failed"; exit 1; }
echo "$name: every mode gave the same result"
