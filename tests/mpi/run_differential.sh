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
#   STAGIO_TEST_RANK0_ENV="A=b"  more environment for rank 0 of the stagio run only (launched
#                              apart with mpiexec's ':', so that ranks can differ)
#   DIFF_EXPLAINER=path        program whose --explain decodes logs (default: PROGRAM)
#   DIFF_TIMEOUT=seconds       limit per run (default 600)
#   DIFF_KEEP=1                keep the work directory even on success
#   MPIEXEC_FLAGS="..."        extra mpiexec flags, e.g. "-hosts localhost"
#   DIFF_EXPECT_LINES="N:ERE"  the stagio run's output (stdout and stderr of all ranks) must
#                              hold exactly N lines matching the extended regex ERE, e.g.
#                              "1:^stagio: warning: the collective cache needs" (a warning
#                              printed once per job, not per rank or per file); "N+:ERE": at
#                              least N (a warning printed once per file)
#   DIFF_IOND=N                the stagio run goes through N stagio-iond daemons (iond_lib.sh)
#                              serving its work directory, started before it and stopped with
#                              SIGTERM after it (each must exit 0: everything flushed); the
#                              ranks get STAGIO_IOND naming them
#   DIFF_IOND_BIN=path         stagio-iond (needed with DIFF_IOND)
#   DIFF_IOND_LISTEN=unix|tcp  sockets in the work directory (default), or 127.0.0.1:0
#   DIFF_IOND_ARGS="..."       more daemon arguments, e.g. "--cache-size 1M --block-size 16K"
#   DIFF_IOND_TOKEN=secret     the daemons' token (STAGIO_IOND_TOKEN), the ranks' too unless
#                              STAGIO_TEST_ENV gives them another
#   DIFF_IOND_ROOT=outside     serve an empty directory beside the run's instead, so that every
#                              file of the run is outside the daemons' root
#   DIFF_IOND_USED=1|0         1 (default): the tier must really be used: no warning that it is
#                              off, refused a file or was lost, and every daemon served reads
#                              or writes (its --stats); 0: not checked (fallback tests)
#   DIFF_IOND_LOG="ERE"        some daemon's output must hold a line matching ERE
#   DIFF_IOND_SEGSTORE=1       each daemon keeps a segment store in the work directory
#                              (segments-INDEX; its sizes come with DIFF_IOND_ARGS), and must
#                              have written segments by the end (its --stats)
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
read -r -a rank0_env <<< "${STAGIO_TEST_RANK0_ENV:-}"
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
expect_count='' expect_more='' expect_pattern=''
if [[ -n ${DIFF_EXPECT_LINES:-} ]]; then
  if [[ ! $DIFF_EXPECT_LINES =~ ^([0-9]+)(\+?):(.+)$ ]]; then
    echo "run_differential: DIFF_EXPECT_LINES must be N:ERE or N+:ERE," \
         "got '$DIFF_EXPECT_LINES'" >&2
    exit 64
  fi
  expect_count=${BASH_REMATCH[1]} expect_more=${BASH_REMATCH[2]}
  expect_pattern=${BASH_REMATCH[3]}
fi
iond_count=${DIFF_IOND:-0}
if (( iond_count > 0 )) && [[ $libstagio != - ]]; then
  [[ -x ${DIFF_IOND_BIN:-} ]] || {
    echo "run_differential: DIFF_IOND needs DIFF_IOND_BIN, the stagio-iond executable" >&2
    exit 64
  }
  source "$(dirname "${BASH_SOURCE[0]}")/iond_lib.sh"
  read -r -a iond_args <<< "${DIFF_IOND_ARGS:-}"
else
  iond_count=0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-differential.XXXXXX")
keep_work=${DIFF_KEEP:-0}
cleanup() {
  (( iond_count == 0 )) || iond_kill_left
  [[ $keep_work == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT

# run NAME ENV...: one launch of PROGRAM over all seeds; logs in $work/NAME/log.<rank>.
# STAGIO_TEST_ENV is this script's input, not stagio's: stagio would warn about an unknown
# STAGIO_ variable.
# RANK0_ENV (an array) is more environment for rank 0 alone.
RANK0_ENV=()
run() {
  local name=$1; shift
  mkdir -p "$work/$name/files"
  local start=$SECONDS status=0
  local command=(env -u LD_PRELOAD -u STAGIO_TEST_ENV -u STAGIO_TEST_RANK0_ENV "$@"
                 "$program" --seeds "$seeds" --dir "$work/$name/files" --log "$work/$name/log")
  local ranks=(-n "$nranks" "${command[@]}")
  if (( ${#RANK0_ENV[@]} > 0 )); then
    ranks=(-n 1 "${command[@]:0:${#command[@]}-7}" "${RANK0_ENV[@]}" "${command[@]: -7}")
    (( nranks > 1 )) && ranks+=(: -n "$((nranks - 1))" "${command[@]}")
  fi
  timeout "$run_timeout" "$mpiexec" "${mpiexec_flags[@]}" "${ranks[@]}" \
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

fail() {
  keep_work=1
  echo "run_differential: FAILED ($1; files kept in $work)"
  exit 1
}

# The stagio run's daemons, serving $work/stagio (or an empty $work/elsewhere); sets iond_env.
start_daemons() {
  local root=$work/stagio listen=unix index
  [[ ${DIFF_IOND_ROOT:-run} == outside ]] && root=$work/elsewhere
  [[ ${DIFF_IOND_LISTEN:-unix} == tcp ]] && listen=127.0.0.1:0
  mkdir -p "$root"
  # The daemons read it, and the ranks inherit it (after the plain run, which never sees it).
  [[ -z ${DIFF_IOND_TOKEN:-} ]] || export STAGIO_IOND_TOKEN=$DIFF_IOND_TOKEN
  local segstore_args=()
  for (( index = 0; index < iond_count; index++ )); do
    if [[ ${DIFF_IOND_SEGSTORE:-0} == 1 ]]; then
      mkdir -p "$work/segments-$index"
      segstore_args=(--segstore "$work/segments-$index")
    fi
    iond_start "$DIFF_IOND_BIN" "$work" "$index" "$listen" "$root" "${iond_args[@]}" \
      "${segstore_args[@]}"
  done
  iond_wait_ready || fail "stagio-iond did not start"
  iond_env=(STAGIO_IOND="$iond_addresses")
  echo "run_differential: $iond_count stagio-iond at $iond_addresses"
}

# After the stagio run: the daemons shut down cleanly, and were used (DIFF_IOND_USED).
check_daemons() {
  local index counts served=0 fallback
  iond_stop || fail "stagio-iond shutdown"
  if [[ -n ${DIFF_IOND_LOG:-} ]]; then
    if ! cat "$work"/iond-*.log | grep -m 1 -E -- "$DIFF_IOND_LOG"; then
      echo "run_differential: no daemon output line matches '$DIFF_IOND_LOG'"
      for (( index = 0; index < iond_count; index++ )); do iond_show_log "$index"; done
      fail "daemon output"
    fi
  fi
  [[ ${DIFF_IOND_USED:-1} == 1 ]] || return 0
  local off='^stagio: warning: .*(I/O-node tier is off|refused|read and written directly)'
  fallback=$(grep -E -- "$off" "$work/stagio/output" || true)
  if [[ -n $fallback ]]; then
    echo "run_differential: the I/O-node tier was not used throughout:"
    echo "$fallback" | head -n 5
    fail "I/O-node tier"
  fi
  for (( index = 0; index < iond_count; index++ )); do
    counts=$(iond_requests "$index") || fail "stagio-iond $index wrote no stats"
    echo "run_differential: stagio-iond $index served $counts"
    served=$(( $(iond_request_count "$index" ReadBlocks) +
               $(iond_request_count "$index" WriteBlocks) ))
    (( served > 0 )) || fail "stagio-iond $index served no reads or writes"
    if [[ ${DIFF_IOND_SEGSTORE:-0} == 1 ]]; then
      counts=$(iond_segment_store "$index") || fail "stagio-iond $index has no segment store"
      echo "run_differential: stagio-iond $index segment store: $counts"
      [[ $counts =~ segments_written=([1-9]) ]] ||
        fail "stagio-iond $index wrote no segment"
    fi
  done
}

# The reference run never sees libstagio.
run plain
if [[ $libstagio == - ]]; then
  second=plain2
  run plain2
else
  second=stagio
  iond_env=()
  (( iond_count == 0 )) || start_daemons
  RANK0_ENV=("${rank0_env[@]}")
  run stagio LD_PRELOAD="$libstagio" "${iond_env[@]}" "${stagio_env[@]}"
  RANK0_ENV=()
  (( iond_count == 0 )) || check_daemons
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
    if (( found != expect_count )) && [[ -z $expect_more || found -lt expect_count ]]; then
      echo "run_differential: expected $expect_count$expect_more line(s) matching" \
           "'$expect_pattern' in the stagio run's output, found $found:"
      grep -E -- "$expect_pattern" "$work/stagio/output" | head -n 5 || true
      keep_work=1
      echo "run_differential: FAILED (output; files kept in $work)"
      exit 1
    fi
    if (( found > 0 )); then
      echo "run_differential: $found line(s) matching '$expect_pattern' as expected; the first:"
      grep -m 1 -E -- "$expect_pattern" "$work/stagio/output"
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
