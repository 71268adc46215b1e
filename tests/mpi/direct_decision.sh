#!/usr/bin/env bash
# The direct path's automatic decision, end to end: with default settings, IOR-like streaming on
# fast storage (this machine's tmp directory) must take the direct path for most calls, once
# stagio has timed its storage; on emulated slow storage the same job, computing between its
# segments, must stay in the cache, but for the one write and the one read per rank that time
# the storage (probes, direct_policy.h); without compute its writes go direct;
# a call that moves a quarter of the cache goes direct even there; and stagio_direct=never
# keeps every call in the cache. Every run checks its bytes (--verify-output re-reads them).
#
#   direct_decision.sh MPIEXEC BENCH_IOR LIBSTAGIO STAGIO_EMU LIBSTAGIO_EMU
set -euo pipefail
mpiexec=$1 bench_ior=$2 lib=$3 emu=$4 libemu=$5
work=$(mktemp -d /tmp/stagio-direct-decision.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0

# run NAME MIN_SHARE MAX_SHARE COMPUTE_MS [ENV...] -- [EMU...]: one write-then-verify run on 2
# ranks, with a compute phase of COMPUTE_MS before each segment's writes; the
# share of calls that went direct (direct_calls over all calls) must lie in [MIN, MAX]. Under
# stagio-emu the ranks preload its shim after libstagio.so (stagio-emu's own LD_PRELOAD, which
# carries the shim, is replaced on the command).
run() {
  local name=$1 min=$2 max=$3 compute_ms=$4
  shift 4
  local env=() wrapper=() preload=$lib
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do env+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  wrapper=("$@")
  [ ${#wrapper[@]} -gt 0 ] && preload="$lib:$libemu"
  rm -rf "${work:?}"/data "$work"/stats.json
  mkdir -p "$work/data"
  if ! "${wrapper[@]}" env LD_PRELOAD="$preload" STAGIO_STATS="$work/stats.json" "${env[@]}" \
      "$mpiexec" -n 2 "$bench_ior" --file "$work/data/f" --mode write --block 8388608 \
      --transfer 1048576 --segments 2 --compute-ms "$compute_ms" --verify-output >"$work/out" 2>&1; then
    echo "FAIL: $name: the run failed"; sed 's/^/  | /' "$work/out"; failures=$((failures + 1))
    return
  fi
  if ! grep -q '"verify_errors": 0' "$work/out"; then
    echo "FAIL: $name: wrong bytes"; grep STAGIO_BENCH_RESULT "$work/out"
    failures=$((failures + 1)); return
  fi
  local verdict
  verdict=$(python3 - "$work/stats.json" "$min" "$max" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
direct = calls = 0
for rank in stats["per_rank"]:
    for counters in rank["files"].values():
        direct += counters["direct_calls"]
        calls += sum(c["calls"] for c in counters["calls"].values())
share = direct / calls if calls else 0
ok = float(sys.argv[2]) <= share <= float(sys.argv[3])
print(("ok" if ok else "bad") + f" {direct} of {calls} calls direct ({share:.0%})")
PY
)
  echo "$name: $verdict"
  [[ "$verdict" == ok* ]] || failures=$((failures + 1))
}

slow=("$emu" --dir "$work/data" --latency-ms 2 --bandwidth-mbps 200 --)
# Fast storage: after the first write-backs and fetches are timed, the rest go direct.
run "fast storage, defaults" 0.5 1 0 --
run "fast storage, stagio_direct=never" 0 0 0 STAGIO_DIRECT=never --
# Slow storage: a 1 MiB request takes over 5 ms, a copy of it a tenth of a millisecond. With
# 100 ms of compute before each segment's 8 MiB of writes per rank (12 ns per byte written),
# write-back has time to hide them. Of the 64 calls (16 writes and 16 reads per rank), the
# first write and the first read of each rank are probes; the 15 cached writes that follow
# stay one short of the first re-probe (direct_policy.h).
run "emulated slow storage, compute, defaults" 0.0625 0.0625 100 -- "${slow[@]}"
# No compute: write-back would have no time to hide the writes in, so they go direct; the
# reads stay in the cache. The time between MPI_Init and the first write counts as time to
# hide in, so the first few writes may still go through the cache (more on a loaded machine):
# at least half of the 32 writes go direct, and each rank's first read.
run "emulated slow storage, no compute, defaults" 0.28125 0.53125 0 -- "${slow[@]}"
# A 4 MiB cache: every 1 MiB call is a quarter of it.
run "emulated slow storage, 4 MiB cache" 1 1 100 STAGIO_CACHE_SIZE=4M -- "${slow[@]}"

[ "$failures" = 0 ] && echo "direct decision: all runs as expected"
exit $((failures > 0))
