#!/usr/bin/env bash
# Runs one conformance program under plain MPI, under stagio and under stagio with a
# stagio-iond daemon, and compares what each run says of the rules it checks
# (compare_outcomes.py).
#
# usage: run_conformance.sh NRANKS PROGRAM LIBSTAGIO MPIEXEC MPI KNOWN [IOND_BIN]
#
#   PROGRAM    a conformance program (conformance.h): PROGRAM DIR
#   LIBSTAGIO  path of libstagio.so, preloaded into every rank of the stagio runs
#   MPI        mpich or openmpi: which entries of KNOWN apply
#   KNOWN      the rules plain MPI may break (known_failures.txt)
#   IOND_BIN   stagio-iond; without it the daemon run is left out
#
# environment:
#   CONF_TIMEOUT=seconds   limit per run (default 120): a run past it counts as a hang
#   CONF_HANG_TIMEOUT=s    limit of the plain run where KNOWN says plain MPI crashes or hangs
#                          in this program (default 8; it runs to the hang in about 1 s)
#   CONF_KEEP=1            keep the work directory even on success
#   STAGIO_TEST_ENV="A=b"  extra environment for the stagio runs
#
# Exit status 0 when every stagio run says what plain MPI says, or better where plain MPI breaks
# a rule it is known to break; 1 otherwise, with the differing lines and each run's stderr.
set -euo pipefail

if [[ $# -lt 6 || $# -gt 7 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
fi
nranks=$1 program=$2 libstagio=$3 mpiexec=$4 mpi=$5 known=$6 iond_bin=${7:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run_timeout=${CONF_TIMEOUT:-120}
read -r -a stagio_env <<< "${STAGIO_TEST_ENV:-}"
name=$(basename "$program")

work=$(mktemp -d "${TMPDIR:-/tmp}/conformance.$name.XXXXXX")
source "$here/../mpi/iond_lib.sh"
finish() {
  local status=$?
  iond_kill_left
  if (( status == 0 )) && [[ ${CONF_KEEP:-0} != 1 ]]; then
    rm -rf "$work"
  else
    echo "run_conformance: work directory kept: $work"
  fi
}
trap finish EXIT

# run MODE [ENV...]: runs the program in $work/MODE/files, its stdout in $work/MODE/out, its
# stderr in $work/MODE/err and its exit status (124 after the time limit) in $work/MODE/status.
run() {
  local mode=$1
  shift
  mkdir -p "$work/$mode/files"
  local status=0 limit=$run_timeout
  [[ $mode == plain ]] && limit=$plain_timeout
  timeout --kill-after=10 "$limit" \
    "$mpiexec" -n "$nranks" env "$@" "$program" "$work/$mode/files" \
    > "$work/$mode/out" 2> "$work/$mode/err" < /dev/null || status=$?
  echo "$status" > "$work/$mode/status"
}

# stagio_was_active MODE: the run's stderr says stagio intercepted its calls on every rank.
stagio_was_active() {
  if ! grep -q "stagio_is_active()=1 on all ranks" "$work/$1/err"; then
    echo "run_conformance: the $1 run did not go through stagio:"
    sed 's/^/  /' "$work/$1/err" | head -n 20
    return 1
  fi
}

# Where plain MPI is known to hang, waiting the full limit for it would only slow the tests.
plain_timeout=$run_timeout
if python3 "$here/compare_outcomes.py" --mpi "$mpi" --ranks "$nranks" --known "$known" \
     --program "$name" --plain-may-stop; then
  plain_timeout=${CONF_HANG_TIMEOUT:-8}
fi
run plain
run stagio LD_PRELOAD="$libstagio" "${stagio_env[@]}"
stagio_was_active stagio
candidates=(stagio="$work/stagio")

if [[ -n $iond_bin ]]; then
  mkdir -p "$work/iond/files"
  iond_start "$iond_bin" "$work" 0 unix "$work/iond/files"
  iond_wait_ready
  run iond LD_PRELOAD="$libstagio" STAGIO_IOND="$iond_addresses" "${stagio_env[@]}"
  iond_stop
  stagio_was_active iond
  if grep -q "^stagio: warning: the I/O-node tier" "$work/iond/err"; then
    echo "run_conformance: the daemon run did not use the daemon:"
    grep "^stagio: warning" "$work/iond/err" | head -n 5 | sed 's/^/  /'
    exit 1
  fi
  if (( $(iond_request_count 0 Open) == 0 )); then
    echo "run_conformance: stagio-iond opened no file in the daemon run"
    exit 1
  fi
  candidates+=(iond="$work/iond")
fi

if ! python3 "$here/compare_outcomes.py" --mpi "$mpi" --ranks "$nranks" --known "$known" \
       --program "$name" "$work/plain" "${candidates[@]}"; then
  for mode in plain stagio iond; do
    [[ -f $work/$mode/err ]] || continue
    echo "---- $mode run: exit status $(cat "$work/$mode/status"), stderr ----"
    tail -n 30 "$work/$mode/err"
  done
  exit 1
fi
