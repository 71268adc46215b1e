#!/usr/bin/env bash
# Runs one libFuzzer target as a test.
#
# usage: run_fuzzer.sh FUZZER CORPUS_DIR WORK_DIR SECONDS
#
#   CORPUS_DIR  the committed corpus (tests/fuzz/corpus/<target>); only read
#   WORK_DIR    new inputs (WORK_DIR/new) and crash reproducers (WORK_DIR/artifacts) go here
#   SECONDS     how long to fuzz, starting from the corpus; 0: run each corpus input once and
#               stop (a regression run: a bug fixed once stays fixed)
#
# Fails when the fuzzer finds a crash, a sanitizer report, a leak, an input slower than 10 s or
# one that takes more than 2 GiB; the reproducer's path is in the output.
set -euo pipefail
if [[ $# -ne 4 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
fi
fuzzer=$1 corpus=$2 work=$3 seconds=$4
mkdir -p "$work/new" "$work/artifacts"
options=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/" -print_final_stats=1)
if (( seconds == 0 )); then
  exec "$fuzzer" "${options[@]}" -runs=0 "$corpus"
fi
exec "$fuzzer" "${options[@]}" -max_total_time="$seconds" "$work/new" "$corpus"
