#!/usr/bin/env bash
# Faults of the daemon's segment store, under a real MPI job through stagio and one
# stagio-iond (segstore_reader.c writes the file and checks every byte it reads):
#
#   restart  the daemon is SIGKILLed while it groups the first pass's pieces, the file is
#            rewritten without it, and a daemon started again on the same segment directory
#            serves the new bytes (it starts empty), before and after grouping them again.
#   corrupt  the segment file is overwritten behind the daemon's back after grouping: the next
#            pass still reads the right bytes, and the daemon counts the corrupt segments.
#   full     the segment directory is a 256 KiB file system and the store asks for 2 MiB: the
#            daemon says it cannot reserve the space, runs without the store, and reads are
#            right. Skipped (77) where a tmpfs cannot be mounted (not root).
#
# usage: segstore_faults.sh FAULT NRANKS PROGRAM LIBSTAGIO MPIEXEC STAGIO_IOND_BIN
#
# Waits poll, bounded only so that a broken daemon fails the test instead of hanging it.
set -euo pipefail

if [[ $# -ne 6 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 64
fi
fault=$1 nranks=$2 program=$3 libstagio=$4 mpiexec=$5 iond_bin=$6
source "$(dirname "${BASH_SOURCE[0]}")/iond_lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-segstore-faults.XXXXXX")
keep_work=0 mounted=0
cleanup() {
  iond_kill_left
  (( mounted == 0 )) || umount "$work/segments" || true
  [[ $keep_work == 1 ]] || rm -rf "$work"
}
trap cleanup EXIT
fail() {
  keep_work=1
  echo "segstore_faults: FAILED ($1; files kept in $work)"
  exit 1
}

mkdir -p "$work/root" "$work/segments"
data=$work/root/data
segments=$work/segments/stagio-segments
cache=128K
[[ $fault == corrupt ]] && cache=64K  # one segment: most segment reads come from the file
daemon_args=(--block-size 16K --cache-size 64K --prefetch-blocks 0
             --segstore "$work/segments" --segstore-size 2M --segstore-segment-size 64K
             --segstore-cache "$cache" --segstore-idle 0.2)

start_daemon() {
  iond_start "$iond_bin" "$work" 0 unix "$work/root" "${daemon_args[@]}"
  iond_wait_ready || fail "stagio-iond did not start"
}
plain() {
  "$mpiexec" -n "$nranks" "$program" "$1" "$data" "$2" || fail "plain $1 of generation $2"
}
stagio() {
  "$mpiexec" -n "$nranks" env LD_PRELOAD="$libstagio" STAGIO_IOND="$iond_addresses" \
    STAGIO_BLOCK_SIZE=16K STAGIO_CACHE_SIZE=64K "$program" "$1" "$data" "$2" \
    > "$work/output" 2>&1 || { cat "$work/output"; fail "stagio $1 of generation $2"; }
  cat "$work/output"
  if grep -E '^stagio: warning: .*(I/O-node tier is off|refused|read and written directly)' \
       "$work/output"; then
    fail "the I/O-node tier was not used"
  fi
}
# Until the first segment is in the segment file (it starts as zeros).
wait_for_a_segment() {
  local deadline=$((SECONDS + 60))
  while cmp -s -n 65536 "$segments" /dev/zero; do
    (( SECONDS <= deadline )) || fail "no segment written within 60 s"
    sleep 0.02
  done
}
# Stops the daemon and prints "name=value ..." of its segment store.
stop_daemon() {
  iond_stop || fail "stagio-iond shutdown"
  store=$(iond_segment_store 0) || fail "no segment store in the stats"
  echo "segstore_faults: segment store: $store"
}
counter() { [[ $store =~ (^| )$1=([0-9]+) ]] && echo "${BASH_REMATCH[2]}"; }

case $fault in
  restart)
    plain write 1
    start_daemon
    stagio read 1
    wait_for_a_segment
    kill -KILL "${iond_pids[0]}"
    iond_kill_left
    plain write 2  # behind the daemon's back: it is not running
    start_daemon
    stagio read 2
    wait_for_a_segment
    sleep 1  # idle long enough for the rest of the grouping
    stagio read 2
    stop_daemon
    (( $(counter read_hits) > 0 )) || fail "the restarted daemon served nothing from segments"
    ;;
  corrupt)
    plain write 1
    start_daemon
    stagio read 1
    wait_for_a_segment
    sleep 1
    dd if=/dev/urandom of="$segments" bs=64K count=32 conv=notrunc status=none
    stagio read 1
    stop_daemon
    (( $(counter corrupt_segments) > 0 )) || fail "no corrupt segment found"
    grep -q "does not match its checksum" "$work/iond-0.log" ||
      fail "the daemon's log does not name the corrupt segment"
    ;;
  full)
    if ! mount -t tmpfs -o size=256k tmpfs "$work/segments" 2>/dev/null; then
      echo "segstore_faults: cannot mount a small tmpfs here (not root?): skipped"
      exit 77
    fi
    mounted=1
    plain write 1
    start_daemon
    grep -q "cannot reserve .* runs without its segment store" "$work/iond-0.log" ||
      { iond_show_log 0; fail "the daemon did not say the store cannot be made"; }
    stagio read 1
    stagio read 1
    iond_stop || fail "stagio-iond shutdown"
    ;;
  *)
    echo "segstore_faults: unknown fault '$fault'" >&2
    exit 64
    ;;
esac
echo "segstore_faults: $fault passed"
