#!/usr/bin/env bash
# Smoke test of one benchmark workload: for each RUN (a string of the workload's options;
# "{dir}" stands for the scratch directory), create a tiny input with --create-input, then run
# on 2 ranks with independent calls, with --collective, with --skip-io and, when LIBSTAGIO is
# not "-", under LD_PRELOAD=LIBSTAGIO. Every run must exit 0 and print a result line with
# "verify_errors": 0, and all runs of one RUN must agree on the "result" value if there is one.
#
#   smoke.sh MPIEXEC BINARY LIBSTAGIO|- RUN...
set -euo pipefail
mpiexec=$1 binary=$2 lib=$3
shift 3
work=$(mktemp -d /tmp/stagio-bench-smoke.XXXXXX)
trap 'rm -rf "$work"' EXIT
name=$(basename "$binary")
failures=0

fail() {
  echo "FAIL: $name $*"
  sed 's/^/  | /' "$work/out" "$work/err"
  failures=$((failures + 1))
}

for run in "$@"; do
  # Split on any white space, newlines included, so that a RUN may span lines.
  read -r -d '' -a options <<<"${run//\{dir\}/$work}" || true
  run=${options[*]}
  rm -rf "${work:?}"/*
  "$mpiexec" -n 1 "$binary" --file "$work/data" --ranks 2 --create-input "${options[@]}" \
      >"$work/out" 2>"$work/err" || { fail "--create-input $run"; continue; }
  needs_input=1
  grep -q '"file": null' "$work/out" && needs_input=0

  variants=("" "--collective" "--skip-io")
  [ "$lib" != "-" ] && variants+=("preload")
  results=()
  for variant in "${variants[@]}"; do
    # Outputs of the previous variant must not pass for this one's.
    for file in "$work"/*; do
      case $(basename "$file") in
        out | err) ;;
        data) [ "$needs_input" = 1 ] || rm -f "$file" ;;
        *) rm -rf "$file" ;;
      esac
    done
    launch=("$mpiexec" -n 2)
    extra=()
    if [ "$variant" = "preload" ]; then launch+=(env LD_PRELOAD="$lib"); else extra=($variant); fi
    if ! "${launch[@]}" "$binary" --file "$work/data" --compute-ms 0 "${options[@]}" \
        "${extra[@]}" >"$work/out" 2>"$work/err"; then
      fail "$run ${variant:-independent}: exit status non-zero"; continue
    fi
    line=$(grep '^STAGIO_BENCH_RESULT ' "$work/out" || true)
    if [ "$(grep -c '^STAGIO_BENCH_RESULT ' "$work/out")" != 1 ] || \
       [[ "$line" != *'"verify_errors": 0'* ]]; then
      fail "$run ${variant:-independent}: no single result line with verify_errors 0"; continue
    fi
    results+=("$(sed -n 's/.*"result": //p' <<<"$line")")
    echo "ok: $name $run ${variant:-independent}"
    echo "    $line"
  done
  for result in "${results[@]}"; do
    if [ "$result" != "${results[0]}" ]; then
      echo "FAIL: $name $run: the runs' results differ: ${results[*]}"
      failures=$((failures + 1))
      break
    fi
  done
done
[ "$failures" = 0 ] || { echo "$failures failed"; exit 1; }
echo "$name: all smoke runs passed"
