#!/usr/bin/env bash
# The Slurm recipe (docs/batch-systems.md, scripts/slurm/stagio-job.sbatch), with mpiexec
# standing in for srun (./srun) on a one-node "allocation", against an installed stagio.
#
#   slurm_recipe.sh BUILD_DIR MPIEXEC DEMO
#
# The demo (examples/demo.c) checks every byte it reads back. Three ways to run it:
# 1. srun with the preload in the environment: stagio must have served the calls (stats);
# 2. `stagio run -- srun ...`: likewise;
# 3. the batch script, one daemon per node: the job succeeds and the daemon served its file.
set -euo pipefail

build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-slurm-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
export SRUN_STAND_IN_MPIEXEC=$2 PATH="$here:$PATH" SLURM_NNODES=1 SLURM_NTASKS=2
demo=$3
cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log" >&2; exit 1; }

served_calls() {  # served_calls STATS: the calls stagio counted, all files and kinds
  python3 -c 'import json, sys
calls = json.load(open(sys.argv[1]))["total"]["calls"]
print(sum(kind["calls"] for kind in calls.values()))' "$1"
}

# 1. srun, the preload in its environment.
LD_PRELOAD=$prefix/lib/libstagio.so STAGIO_STATS=$work/preload.json \
  timeout 120 srun "$demo" "$work/preload.dat" 4 256 0 >"$work/preload.out" 2>&1 ||
  { echo "slurm_recipe: srun with the preload failed" >&2; cat "$work/preload.out" >&2; exit 1; }
echo "slurm_recipe: srun with LD_PRELOAD: $(served_calls "$work/preload.json") calls through stagio"

# 2. stagio run around srun.
STAGIO_STATS=$work/run.json timeout 120 "$prefix/bin/stagio" run -- srun -n 2 "$demo" \
  "$work/run.dat" 4 256 0 >"$work/run.out" 2>&1 ||
  { echo "slurm_recipe: stagio run -- srun failed" >&2; cat "$work/run.out" >&2; exit 1; }
echo "slurm_recipe: stagio run -- srun: $(served_calls "$work/run.json") calls through stagio"

# 3. The batch script: one daemon per node, on a free port, its directory kept for the check.
mkdir "$work/job"
(cd "$work/job" && SLURM_SUBMIT_DIR=$work/job STAGIO_STATS=$work/job.json timeout 180 \
   bash "$source_dir/scripts/slurm/stagio-job.sbatch" --prefix "$prefix" --port 0 --keep \
   --iond-arg=--cache-size=64M -- "$demo" "$work/job/demo.dat" 4 256 0 >"$work/job.out" 2>&1) ||
  { echo "slurm_recipe: the batch script failed" >&2; cat "$work/job.out" >&2; exit 1; }
python3 - "$work/job" "$work/job.json" <<'PYTHON'
import glob, json, sys
daemon_stats = glob.glob(f"{sys.argv[1]}/.stagio-job.*/stats.0.json")
if len(daemon_stats) != 1:
    sys.exit(f"slurm_recipe: the daemon wrote no stats at SIGTERM: {daemon_stats}")
served = json.load(open(daemon_stats[0]))
if not served["bytes_written"]:
    sys.exit(f"slurm_recipe: the daemon served nothing of the job: {served}")
print(f"slurm_recipe: the batch script's daemon wrote {served['bytes_written']} bytes, "
      f"read {served['bytes_read']}")
PYTHON
echo "slurm_recipe: ok"
