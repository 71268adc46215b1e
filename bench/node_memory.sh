#!/usr/bin/env bash
# node_memory.sh: the resident memory of one node's ranks while they read through stagio, with
# the node cache (the default) and with per-rank caches, against plain MPI-IO.
#
#   bash bench/node_memory.sh [--mpi mpich|openmpi] [--build DIR] [--out DIR] [--ranks N]
#
# Two workloads, each with a 64 MiB cache per rank, so that the caches fill and evict:
#   read:       each rank reads 1 MiB records of a 512 MiB file, strided so that every block is
#               read by one rank (pio-bench strided);
#   read-write: each rank reads its part of the same file in 768 KiB chunks and writes them,
#               encrypted, to a second file (hill): two files in the node cache at once, which
#               together must still keep within one budget.
# Every
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
library="$(readlink -f "$build/libstagio.so")"
work=$(mktemp -d /tmp/stagio-node-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT
input="$work/input.dat"
cache_mib=64
read_job=("$build/bench/bench_piobench" --pattern strided --record 1M --stride 0
          --records $((512 / ranks)) --compute-ms 1 --file "$input")
read_write_job=("$build/bench/bench_chunked" --app hill --chunk 786432
                --chunks $((512 * 4 / 3 / ranks)) --compute-ms 1 --file "$input"
                --output "$work/output.dat")
"${launch[@]}" "${read_job[@]}" --create-input > /dev/null

# Peak over the run of the sum of the ranks' Pss, in KiB.
peak_pss_kib() {
  local peak=0
  while kill -0 "$1" 2> /dev/null; do
    local sum=0
    for pid in $(pgrep -f "bench_.*$input" || true); do
      local pss
      pss=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2> /dev/null || echo 0)
      sum=$((sum + ${pss:-0}))
    done
    ((sum > peak)) && peak=$sum
    sleep 0.1
  done
  echo "$peak"
}

measure() {  # WORKLOAD NAME ENV...
  local workload="$1" name="$2"
  shift 2
  local -n job_command="${workload//-/_}_job"
  rm -f "$work/output.dat"
  env "$@" "${launch[@]}" "${job_command[@]}" > "$work/$workload.$name.out" 2>&1 &
  local job=$!
  local peak
  peak=$(peak_pss_kib "$job")
  if ! wait "$job"; then
    echo "node_memory.sh: the $workload job failed in mode $name:" >&2
    tail -n 20 "$work/$workload.$name.out" >&2
    exit 1
  fi
  echo "$workload $name $peak"
}

{
  for workload in read read-write; do
    measure "$workload" plain LD_PRELOAD=
    # stagio loaded, its threads running, but no file cached: what the library costs without
    # a cache (its code, data and threads), so that what the caches add can be told apart.
    measure "$workload" stagio-no-cache LD_PRELOAD="$library" STAGIO_CACHE=disable
    measure "$workload" node-cache LD_PRELOAD="$library" STAGIO_CACHE_SIZE=${cache_mib}M
    measure "$workload" per-rank-caches LD_PRELOAD="$library" STAGIO_CACHE_SIZE=${cache_mib}M \
      STAGIO_NODE_CACHE=disable STAGIO_COLLECTIVE_CACHE=disable
  done
} > "$work/peaks"

mkdir -p "$out"
budget_mib=$((ranks * cache_mib))
python3 - "$work/peaks" "$out" "$ranks" "$budget_mib" "$mpi" <<'EOF'
import json, sys, datetime
peaks_path, out, ranks, budget_mib, mpi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
peaks = {}
for line in open(peaks_path):
    workload, name, kib = line.split()
    peaks.setdefault(workload, {})[name] = int(kib) / 1024
workloads = {}
for workload, by_mode in peaks.items():
    plain, library = by_mode["plain"], by_mode["stagio-no-cache"]
    workloads[workload] = {
        "rows": [{"mode": name, "peak_node_mib": round(mib, 1),
                  "over_plain_mib": round(mib - plain, 1),
                  "over_no_cache_mib": round(mib - library, 1)}
                 for name, mib in by_mode.items()],
        "node_cache_within_budget": by_mode["node-cache"] - library <= budget_mib,
        "node_cache_over_plain_within_budget": by_mode["node-cache"] - plain <= budget_mib}
result = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
          "mpi": mpi, "ranks": ranks, "cache_size_per_rank_mib": budget_mib // ranks,
          "budget_mib": budget_mib, "workloads": workloads}
json.dump(result, open(f"{out}/results.json", "w"), indent=2)
what = {"read": "read a 512 MiB file in 1 MiB records",
        "read-write": "read the same file in 768 KiB chunks and write each, encrypted, to a "
                      "second file (two files in the node cache at once)"}
with open(f"{out}/results.md", "w") as md:
    md.write("# Resident memory of one node's ranks\n\n")
    md.write(f"Produced by `bash bench/node_memory.sh --mpi {mpi} --ranks {ranks} --out {out}`"
             f" ({result['when']}).\n\n")
    md.write(f"stagio_cache_size is {budget_mib // ranks}M per rank: the budgets together are "
             f"{budget_mib} MiB. Peak over the run of the sum of the ranks' Pss (shared memory "
             "counted once).\n")
    for workload, found in workloads.items():
        md.write(f"\n## {workload}\n\n{ranks} ranks {what[workload]}.\n\n")
        md.write("| mode | peak (MiB) | above plain (MiB) | above stagio without a cache (MiB) |\n"
                 "|---|---:|---:|---:|\n")
        for row in found["rows"]:
            md.write(f"| {row['mode']} | {row['peak_node_mib']} | {row['over_plain_mib']} | "
                     f"{row['over_no_cache_mib']} |\n")
        verdict = "met" if found["node_cache_within_budget"] else "NOT met"
        md.write(f"\nNode cache within the sum of the budgets ({budget_mib} MiB above stagio "
                 f"without a cache): **{verdict}**.\n")
        verdict = "yes" if found["node_cache_over_plain_within_budget"] else "no"
        md.write(f"Node cache and the library together within the budgets ({budget_mib} MiB "
                 f"above plain): {verdict}.\n")
print(open(f"{out}/results.md").read())
EOF
