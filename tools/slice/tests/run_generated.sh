#!/usr/bin/env bash
# Builds a program's pre-execution helper with stagio-slice and checks that it changes when
# data arrives, never what the program computes.
#
#   run_generated.sh [--golden] SLICE MPICC MPIEXEC STAGIO_INCLUDE STAGIO_LIBRARY RANKS SOURCE.c...
#
# The program takes FILE and writes a test input with `FILE create` (examples/slice/). With
# --golden it is a golden program (golden/): it takes no arguments and reads ./data, which the
# test fills with 1 MiB of 64-bit words, word i holding (7 i + i / 512 + 3) mod 16 (small
# counts, indexes and offsets); its ranks print their results in any order, so the lines are
# compared sorted, and its exit status too. The original is built as it is and run without
# stagio; the generated sources are built with -lstagio and run under stagio with the helper on
# (STAGIO_PREEXEC=ppis, 4 KiB blocks so that the small accesses span several). For each job
# size in RANKS (comma-separated) both runs start from the same input; their standard output
# and the file afterwards must be identical, and stagio must have dropped none of the helper's
# calls. On 1 rank the helper of a program that is not golden must also have made some (in
# time or late): on more, stagio may take a shared file past its cache (a write-shared file on
# fast storage), and the helper then has nothing to fetch.
set -euo pipefail
golden=0
if [[ ${1:-} == --golden ]]; then golden=1; shift; fi
slice=$1 mpicc=$2 mpiexec=$3 include=$4 library=$5 rank_list=$6
shift 6
sources=("$@")
source_dir=$(dirname "${sources[0]}")
work=$(mktemp -d /tmp/stagio-slice-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
read -r -a mpi_flags <<<"$("$mpicc" -show)"
includes=()
for flag in "${mpi_flags[@]}"; do [[ $flag == -I* ]] && includes+=("$flag"); done

"$mpicc" -O1 -o "$work/original" "${sources[@]}" -I"$source_dir"
"$slice" "${sources[@]}" --report "$work/report.json" -o "$work/generated" -- \
    "${includes[@]}" -I"$source_dir" 2>"$work/slice.err" || {
  echo "FAIL: stagio-slice exited $?"; cat "$work/slice.err"; exit 1; }
python3 - "$work/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
if report["status"] != "rewritten":
    sys.exit(f"FAIL: the program was left unchanged: {report['reason']}")
helper = report["helper"]
print(f"helper: main's lines {helper['region']['first_line']}-{helper['region']['last_line']}, "
      f"copies {helper['copied_at_start']}, clones {helper['cloned_functions']}")
PY
generated=()
for source in "${sources[@]}"; do generated+=("$work/generated/$(basename "$source")"); done
library_dir=$(dirname "$library")
"$mpicc" -O1 -Wall -o "$work/generated/program" "${generated[@]}" -I"$source_dir" -I"$include" \
    -L"$library_dir" -lstagio -Wl,-rpath,"$library_dir" 2>"$work/build.err" || {
  echo "FAIL: the generated sources do not build"; cat "$work/build.err"; exit 1; }
if [ -s "$work/build.err" ]; then
  echo "FAIL: the generated sources build with warnings"; cat "$work/build.err"; exit 1
fi

if (( golden )); then
  python3 -c 'import struct, sys; sys.stdout.buffer.write(b"".join(
      struct.pack("<q", (7 * i + i // 512 + 3) % 16) for i in range(1 << 17)))' >"$work/golden.data"
fi
IFS=, read -r -a rank_counts <<<"$rank_list"
for ranks in "${rank_counts[@]}"; do
  mkdir -p "$work/plain" "$work/helper"
  if (( golden )); then
    cp "$work/golden.data" "$work/plain/data"
    arguments=()
  else
    "$mpiexec" -n 1 "$work/original" "$work/plain/data" create
    arguments=("$work/plain/data")
  fi
  cp "$work/plain/data" "$work/helper/data"
  plain_status=0 helper_status=0
  (cd "$work/plain" && "$mpiexec" -n "$ranks" "$work/original" "${arguments[@]}") \
      >"$work/plain/out" || plain_status=$?
  (( golden )) || arguments=("$work/helper/data")
  (cd "$work/helper" && "$mpiexec" -n "$ranks" env STAGIO_PREEXEC=ppis STAGIO_BLOCK_SIZE=4K \
      STAGIO_STATS="$work/helper/stats.json" "$work/generated/program" "${arguments[@]}") \
      >"$work/helper/out" || helper_status=$?
  # A golden program's exit status is part of its result; the others must succeed.
  if (( golden ? plain_status != helper_status : plain_status != 0 || helper_status != 0 )); then
    echo "FAIL: $ranks rank(s): exit status $plain_status without the helper," \
         "$helper_status with it"; exit 1
  fi
  if (( golden )); then
    sort -o "$work/plain/out" "$work/plain/out"
    sort -o "$work/helper/out" "$work/helper/out"
    [[ -s $work/plain/out ]] || { echo "FAIL: the golden program printed nothing"; exit 1; }
  fi
  cmp "$work/plain/out" "$work/helper/out" || {
    echo "FAIL: $ranks rank(s): the output differs"; diff "$work/plain/out" "$work/helper/out"; exit 1; }
  cmp "$work/plain/data" "$work/helper/data" || {
    echo "FAIL: $ranks rank(s): the file differs afterwards"; exit 1; }
  python3 - "$work/helper/stats.json" "$ranks" "$golden" <<'PY'
import json, sys
total = json.load(open(sys.argv[1]))["total"]
calls, dropped = total.get("preexec_calls", 0), total.get("preexec_dropped", 0)
late = total.get("preexec_skipped_lagging", 0)
print(f"{sys.argv[2]} rank(s): same output and file; preexec_calls {calls} "
      f"(of which late {late}), preexec_dropped {dropped}")
if dropped:
    sys.exit("FAIL: stagio dropped calls of the helper")
# A call made after the main thread is past it (or after the file closed) counts as late. A
# golden program's I/O is a few calls, over before its helper may even start: not checked.
if sys.argv[2] == "1" and sys.argv[3] == "0" and calls + late == 0:
    sys.exit("FAIL: the helper made no prefetch call")
PY
  rm -rf "$work/plain" "$work/helper"
done
