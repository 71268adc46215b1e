#!/usr/bin/env bash
# The I/O-node daemon killed (SIGKILL) or hung (SIGSTOP: alive, its socket open, answering
# nothing) in the middle of a job: runs iond_kill_test (see there for what it checks) against
# one stagio-iond and kills or stops the daemon when the program asks.
#
# usage: iond_kill.sh NRANKS PROGRAM LIBSTAGIO MPIEXEC STAGIO_IOND_BIN [VAR=value ...]
#
#   VAR=value  more environment for the ranks (e.g. STAGIO_COLLECTIVE_CACHE=disable)
#   IOND_FAULT=kill|hang   (environment of this script) what happens to the daemon; default kill.
#              A hung daemon is noticed only by the clients' deadline: give the ranks a short
#              STAGIO_IOND_TIMEOUT. It stays stopped until the end, and is killed then, so it
#              never writes back what it held over what the clients wrote directly since.
#
# Passes when the program passes (exit 0), the daemon died of the SIGKILL and not before (or
# was still stopped at the end), and the job printed exactly one warning that files are now
# read and written directly.
set -euo pipefail

if [[ $# -lt 5 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
fi
nranks=$1 program=$2 libstagio=$3 mpiexec=$4 iond_bin=$5
shift 5
source "$(dirname "${BASH_SOURCE[0]}")/iond_lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-iond-kill.XXXXXX")
keep_work=0
cleanup() {
  iond_kill_left
  [[ -z ${job:-} ]] || { kill -KILL "$job" 2>/dev/null || true; }
  [[ $keep_work == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() {
  keep_work=1
  echo "iond_kill: FAILED ($1; files kept in $work)"
  exit 1
}

iond_start "$iond_bin" "$work" 0 unix "$work"
iond_wait_ready || fail "stagio-iond did not start"
daemon=${iond_pids[0]}

# 16 KiB blocks and a 64 KiB cache: most of phase B is written back to the daemon before the
# kill, so it holds accepted writes that it never flushed.
"$mpiexec" -n "$nranks" env LD_PRELOAD="$libstagio" STAGIO_IOND="$iond_addresses" \
  STAGIO_BLOCK_SIZE=16K STAGIO_CACHE_SIZE=64K "$@" \
  "$program" --file "$work/data" --kill-request "$work/kill-request" --killed "$work/killed" \
  > "$work/output" 2>&1 &
job=$!

until [[ -e $work/kill-request ]]; do
  kill -0 "$job" 2>/dev/null || break
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.02
done
if [[ ! -e $work/kill-request ]]; then
  iond_show_log 0
  tail -n 40 "$work/output"
  fail "the job or the daemon ended before the kill"
fi
if [[ ${IOND_FAULT:-kill} == hang ]]; then
  kill -STOP "$daemon"
  echo "iond_kill: stopped stagio-iond (pid $daemon)"
else
  kill -KILL "$daemon"
  wait "$daemon" && status=0 || status=$?
  unset "iond_pids[0]"
  (( status == 137 )) || { iond_show_log 0; fail "the daemon exited with $status, not by SIGKILL"; }
  echo "iond_kill: killed stagio-iond (pid $daemon)"
fi
touch "$work/killed"

wait "$job" && status=0 || status=$?
job=''
cat "$work/output"
(( status == 0 )) || fail "the job exited with status $status"
warning='^stagio: warning: .*files that were open through it are read and written directly'
found=$(grep -cE -- "$warning" "$work/output" || true)
(( found == 1 )) || fail "expected one warning matching '$warning', found $found"
grep -q "^iond_kill_test: .* 0 failed" "$work/output" || fail "no result line"
if [[ ${IOND_FAULT:-kill} == hang ]]; then
  kill -0 "$daemon" 2>/dev/null || fail "the stopped daemon is gone: it was not hung but dead"
  grep -qE -- 'stagio_iond_timeout' "$work/output" || fail "no word of the deadline in the output"
fi
echo "iond_kill: passed"
