#!/usr/bin/env bash
# node_memory.sh: the resident memory of one node's ranks while they read through stagio, with
# the node cache (the default) and with per-rank caches, against plain MPI-IO.
#
#   bash bench/node_memory.sh [--mpi mpich|openmpi] [--build DIR] [--out DIR] [--ranks N]
#
# Each rank reads 1 MiB records of a 512 MiB file, strided so that every block is read by one
# rank (pio-bench strided), with a 64 MiB cache per rank: the caches fill and evict. Every
# 100 ms the script sums the proportional set size (Pss, /proc/PID/smaps_rollup) of the job's
# ranks: shared memory counts once over the node, split among the ranks that map it. The peak
# of that sum is the node's resident memory. The node cache must stay within the ranks'
# stagio_cache_size together (plus what the program and MPI use without stagio, shown by the
# plain run). A run with stagio loaded but caching off (stagio-no-cache) shows what the library
# itself takes; the verdict is on what the node cache adds to that. Writes results.json and
# results.md to --out.
set -euo pipefail

mpi=mpich
build=build
out=bench/results/node-memory
ranks=4
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpi) mpi="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    *) echo "usage: $0 [--mpi mpich|openmpi] [--build DIR] [--out DIR] [--ranks N]" >&2; exit 2 ;;
  esac
done
if [[ "$mpi" == openmpi ]]; then
  launch=("$build/mpiexec-openmpi" -n "$ranks")
else
  launch=(mpiexec.mpich -n "$ranks")
fi
program="$build/bench/bench_piobench"
library="$(readlink -f "$build/libstagio.so")"
work=$(mktemp -d /tmp/stagio-node-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT
input="$work/input.dat"
cache_mib=64
args=(--pattern strided --record 1M --stride 0 --records $((512 / ranks)) --compute-ms 1
      --file "$input")
"${launch[@]}" "$program" "${args[@]}" --create-input > /dev/null

# Peak over the run of the sum of the ranks' Pss, in KiB.
peak_pss_kib() {
  local peak=0
  while kill -0 "$1" 2> /dev/null; do
    local sum=0
    for pid in $(pgrep -f "bench_piobench.*$input" || true); do
      local pss
      pss=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2> /dev/null || echo 0)
      sum=$((sum + ${pss:-0}))
    done
    ((sum > peak)) && peak=$sum
    sleep 0.1
  done
  echo "$peak"
}

measure() {  # NAME ENV...
  local name="$1"
  shift
  env "$@" "${launch[@]}" "$program" "${args[@]}" > "$work/$name.out" 2>&1 &
  local job=$!
  local peak
  peak=$(peak_pss_kib "$job")
  wait "$job"
  echo "$name $peak"
}

{
  measure plain LD_PRELOAD=
  # stagio loaded, its threads running, but no file cached: what the library costs without a
  # cache (its code, data and threads), so that what the caches add can be told apart.
  measure stagio-no-cache LD_PRELOAD="$library" STAGIO_CACHE=disable
  measure node-cache LD_PRELOAD="$library" STAGIO_CACHE_SIZE=${cache_mib}M
  measure per-rank-caches LD_PRELOAD="$library" STAGIO_CACHE_SIZE=${cache_mib}M \
    STAGIO_NODE_CACHE=disable STAGIO_COLLECTIVE_CACHE=disable
} > "$work/peaks"

mkdir -p "$out"
budget_mib=$((ranks * cache_mib))
python3 - "$work/peaks" "$out" "$ranks" "$budget_mib" "$mpi" "$*" <<'EOF'
import json, sys, datetime
peaks_path, out, ranks, budget_mib, mpi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
peaks = {name: int(kib) / 1024 for name, kib in (line.split() for line in open(peaks_path))}
plain = peaks["plain"]
library = peaks["stagio-no-cache"]
rows = []
for name, mib in peaks.items():
    rows.append({"mode": name, "peak_node_mib": round(mib, 1),
                 "over_plain_mib": round(mib - plain, 1),
                 "over_no_cache_mib": round(mib - library, 1)})
result = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
          "mpi": mpi, "ranks": ranks, "cache_size_per_rank_mib": budget_mib // ranks,
          "budget_mib": budget_mib, "rows": rows,
          "node_cache_within_budget": peaks["node-cache"] - library <= budget_mib,
          "node_cache_over_plain_within_budget": peaks["node-cache"] - plain <= budget_mib}
json.dump(result, open(f"{out}/results.json", "w"), indent=2)
with open(f"{out}/results.md", "w") as md:
    md.write("# Resident memory of one node's ranks\n\n")
    md.write(f"Produced by `bash bench/node_memory.sh --mpi {mpi} --ranks {ranks} --out {out}`"
             f" ({result['when']}).\n\n")
    md.write(f"{ranks} ranks read a 512 MiB file in 1 MiB records with stagio_cache_size "
             f"{budget_mib // ranks}M per rank: the budgets together are {budget_mib} MiB. "
             "Peak over the run of the sum of the ranks' Pss (shared memory counted once).\n\n")
    md.write("| mode | peak (MiB) | above plain (MiB) | above stagio without a cache (MiB) |\n"
             "|---|---:|---:|---:|\n")
    for row in rows:
        md.write(f"| {row['mode']} | {row['peak_node_mib']} | {row['over_plain_mib']} | "
                 f"{row['over_no_cache_mib']} |\n")
    verdict = "met" if result["node_cache_within_budget"] else "NOT met"
    md.write(f"\nNode cache within the sum of the budgets ({budget_mib} MiB above stagio "
             f"without a cache): **{verdict}**.\n")
    verdict = "yes" if result["node_cache_over_plain_within_budget"] else "no"
    md.write(f"Node cache and the library together within the budgets ({budget_mib} MiB above "
             f"plain): {verdict}.\n")
print(open(f"{out}/results.md").read())
EOF
