#!/usr/bin/env bash
# Differential test: runs an MPI test program once under plain MPI and once with
# LD_PRELOAD=libstagio.so, each in a fresh directory, and requires byte-identical per-rank logs.
#
# usage: run_differential.sh NRANKS FIRST:LAST PROGRAM LIBSTAGIO MPIEXEC
#
#   PROGRAM    accepts --seeds FIRST:LAST --dir DIR --log PREFIX, writes PREFIX.<rank> in the
#              format of diff_log.h and reports on stderr whether libstagio was loaded
#              ("stagio_is_active()=N"), as diff_driver and c_only do.
#   LIBSTAGIO  path of libstagio.so, or a colon-separated LD_PRELOAD list holding it and
#              shims to load beside it (e.g. libstagio.so:libthread_level_cap.so), or "-" to
#              compare two plain runs (checks that PROGRAM itself is deterministic).
#
# environment:
#   STAGIO_TEST_ENV="A=b C=d"  extra environment for the stagio run only
#   DIFF_EXPLAINER=path        program whose --explain decodes logs (default: PROGRAM)
#   DIFF_TIMEOUT=seconds       limit per run (default 600)
#   DIFF_KEEP=1                keep the work directory even on success
#   MPIEXEC_FLAGS="..."        extra mpiexec flags, e.g. "-hosts localhost"
#   DIFF_EXPECT_LINES="N:ERE"  the stagio run's output (stdout and stderr of all ranks) must
#                              hold exactly N lines matching the extended regex ERE, e.g.
#                              "1:^stagio: warning: the collective cache needs" (a warning
#                              printed once per job, not per rank or per file)
#
# Prints "differential: S seeds x N ranks passed" and exits 0, or explains the first
# difference and exits 1.
set -euo pipefail

if [[ $# -ne 5 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
fi
nranks=$1 seeds=$2 program=$3 libstagio=$4 mpiexec=$5
explainer=${DIFF_EXPLAINER:-$program}
run_timeout=${DIFF_TIMEOUT:-600}
read -r -a stagio_env <<< "${STAGIO_TEST_ENV:-}"
read -r -a mpiexec_flags <<< "${MPIEXEC_FLAGS:-}"

if [[ ! $seeds =~ ^([0-9]+):([0-9]+)$ ]] || (( BASH_REMATCH[2] < BASH_REMATCH[1] )); then
  echo "run_differential: seeds must be FIRST:LAST, got '$seeds'" >&2
  exit 64
fi
seed_count=$(( BASH_REMATCH[2] - BASH_REMATCH[1] + 1 ))
for file in "$program" "$explainer"; do
  [[ -x $file ]] || { echo "run_differential: $file is not executable" >&2; exit 64; }
done
if [[ $libstagio != - ]]; then
  IFS=: read -r -a preloads <<< "$libstagio"
  for file in "${preloads[@]}"; do
    [[ -f $file ]] || { echo "run_differential: $file does not exist" >&2; exit 64; }
  done
fi
expect_count='' expect_pattern=''
if [[ -n ${DIFF_EXPECT_LINES:-} ]]; then
  if [[ ! $DIFF_EXPECT_LINES =~ ^([0-9]+):(.+)$ ]]; then
    echo "run_differential: DIFF_EXPECT_LINES must be N:ERE, got '$DIFF_EXPECT_LINES'" >&2
    exit 64
  fi
  expect_count=${BASH_REMATCH[1]} expect_pattern=${BASH_REMATCH[2]}
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-differential.XXXXXX")
keep_work=${DIFF_KEEP:-0}
cleanup() { [[ $keep_work == 1 ]] || rm -rf "$work"; }
trap cleanup EXIT

# run NAME ENV...: one launch of PROGRAM over all seeds; logs in $work/NAME/log.<rank>.
# STAGIO_TEST_ENV is this script's input, not stagio's: stagio would warn about an unknown
# STAGIO_ variable.
run() {
  local name=$1; shift
  mkdir -p "$work/$name/files"
  local start=$SECONDS status=0
  timeout "$run_timeout" "$mpiexec" "${mpiexec_flags[@]}" -n "$nranks" \
    env -u LD_PRELOAD -u STAGIO_TEST_ENV "$@" \
    "$program" --seeds "$seeds" --dir "$work/$name/files" --log "$work/$name/log" \
    > "$work/$name/output" 2>&1 || status=$?
  echo "run_differential: $name run: $((SECONDS - start)) s, exit $status"
  if (( status != 0 )); then
    (( status == 124 )) && echo "run_differential: $name run timed out after ${run_timeout} s"
    echo "---- last lines of the $name run's output ----"
    tail -n 40 "$work/$name/output"
    keep_work=1
    echo "run_differential: FAILED ($name run; files kept in $work)"
    exit 1
  fi
}

# The reference run never sees libstagio.
run plain
if [[ $libstagio == - ]]; then
  second=plain2
  run plain2
else
  second=stagio
  run stagio LD_PRELOAD="$libstagio" "${stagio_env[@]}"
  # Make sure the library really was in the way (or, with STAGIO_DISABLE=1, loaded but idle).
  expected_active=1
  for assignment in "${stagio_env[@]}"; do
    [[ $assignment =~ ^STAGIO_DISABLE=(1|true|yes|on)$ ]] && expected_active=0
  done
  if ! grep -q "stagio_is_active()=$expected_active on all ranks" "$work/stagio/output"; then
    echo "run_differential: expected libstagio loaded with stagio_is_active()=$expected_active;" \
         "the program said:"
    grep -i "stagio" "$work/stagio/output" | head -n 5 || true
    keep_work=1
    echo "run_differential: FAILED (interposition; files kept in $work)"
    exit 1
  fi
  if [[ -n $expect_count ]]; then
    found=$(grep -cE -- "$expect_pattern" "$work/stagio/output" || true)
    if (( found != expect_count )); then
      echo "run_differential: expected $expect_count line(s) matching '$expect_pattern' in" \
           "the stagio run's output, found $found:"
      grep -E -- "$expect_pattern" "$work/stagio/output" | head -n 5 || true
      keep_work=1
      echo "run_differential: FAILED (output; files kept in $work)"
      exit 1
    fi
  fi
fi

failed=0
for (( rank = 0; rank < nranks; rank++ )); do
  a="$work/plain/log.$rank" b="$work/$second/log.$rank"
  if ! cmp -s "$a" "$b"; then
    echo "run_differential: rank $rank: the $second log differs from the plain log" \
         "(A=plain, B=$second)"
    "$explainer" --explain "$a" "$b" || true
    failed=1
  fi
done
if (( failed )); then
  keep_work=1
  echo "run_differential: FAILED (logs and outputs kept in $work)"
  exit 1
fi
echo "differential: $seed_count seeds x $nranks ranks passed"
