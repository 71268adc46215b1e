# stagio-iond daemons for the MPI-level test scripts (sourced by run_differential.sh and
# iond_fault.sh; bash, after `set -euo pipefail`).
#
#   iond_start BIN DIR INDEX LISTEN ROOT [ARG...]
#       starts daemon INDEX listening on LISTEN (an address; "unix" for DIR/iond-INDEX.sock),
#       serving ROOT, with its output in DIR/iond-INDEX.log, its stats written at shutdown to
#       DIR/iond-INDEX.json and its ready file DIR/iond-INDEX.ready.
#   iond_wait_ready          waits until every started daemon listens; sets iond_addresses
#                            (comma list, daemon order); returns 1 (with the log) if one exits
#   iond_stop                SIGTERMs every daemon and waits; returns 1 (with the log) unless
#                            every one exits 0 (graceful shutdown: all dirty data flushed)
#   iond_kill_left           SIGKILLs daemons still running (for an EXIT trap)
#   iond_requests INDEX      prints "Open=n ReadBlocks=n WriteBlocks=n ..." from its stats
#   iond_request_count INDEX NAME   prints one of those counts
#   iond_segment_store INDEX        prints its segment store's counters ("reads=n ...")
#
# Waits poll: they are bounded by IOND_WAIT_S (default 60) seconds only so that a hung daemon
# fails the test instead of hanging it, and assert nothing about time.

iond_pids=() iond_dir='' iond_addresses=''
IOND_WAIT_S=${IOND_WAIT_S:-60}

iond_start() {
  local bin=$1 dir=$2 index=$3 listen=$4 root=$5
  shift 5
  [[ $listen == unix ]] && listen=unix:$dir/iond-$index.sock
  iond_dir=$dir
  rm -f "$dir/iond-$index.ready" "$dir/iond-$index.json"
  "$bin" --listen "$listen" --root "$root" --ready-file "$dir/iond-$index.ready" \
    --stats "$dir/iond-$index.json" "$@" > "$dir/iond-$index.log" 2>&1 < /dev/null &
  iond_pids[index]=$!
}

iond_show_log() {
  echo "---- stagio-iond $1 log ($iond_dir/iond-$1.log) ----"
  tail -n 30 "$iond_dir/iond-$1.log" || true
}

iond_wait_ready() {
  local index ready address status addresses=() deadline=$((SECONDS + IOND_WAIT_S))
  for index in "${!iond_pids[@]}"; do
    ready=$iond_dir/iond-$index.ready
    until [[ -s $ready && $(tail -c 1 "$ready") == '' ]]; do
      if ! kill -0 "${iond_pids[index]}" 2>/dev/null; then
        wait "${iond_pids[index]}" && status=0 || status=$?
        echo "iond: stagio-iond $index exited with status $status before it listened"
        iond_show_log "$index"
        unset "iond_pids[index]"
        return 1
      fi
      if (( SECONDS > deadline )); then
        echo "iond: stagio-iond $index did not listen within $IOND_WAIT_S s"
        iond_show_log "$index"
        return 1
      fi
      sleep 0.05
    done
    read -r address < "$ready"
    addresses+=("$address")
  done
  iond_addresses=$(IFS=,; echo "${addresses[*]}")
}

iond_stop() {
  local index status failed=0
  for index in "${!iond_pids[@]}"; do
    kill -TERM "${iond_pids[index]}" 2>/dev/null || true
  done
  for index in "${!iond_pids[@]}"; do
    iond_wait_or_kill "${iond_pids[index]}" && status=0 || status=$?
    unset "iond_pids[index]"
    if (( status != 0 )); then
      echo "iond: stagio-iond $index exited with status $status at shutdown (SIGTERM)"
      iond_show_log "$index"
      failed=1
    fi
  done
  return "$failed"
}

# iond_wait_or_kill PID: its exit status; SIGKILL (status 137) after IOND_WAIT_S seconds.
iond_wait_or_kill() {
  local pid=$1 deadline=$((SECONDS + IOND_WAIT_S))
  while kill -0 "$pid" 2>/dev/null && (( SECONDS <= deadline )); do
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid"
}

iond_kill_left() {
  local pid
  for pid in "${iond_pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  iond_pids=()
}

iond_stats=$(dirname "${BASH_SOURCE[0]}")/iond_stats.py

iond_requests() { python3 "$iond_stats" "$iond_dir/iond-$1.json"; }

# iond_request_count INDEX NAME: the count of one request type, 0 if absent.
iond_request_count() { python3 "$iond_stats" "$iond_dir/iond-$1.json" "$2"; }

# iond_segment_store INDEX: "reads=n read_hits=n ..." of its segment store; 1 if it has none.
iond_segment_store() { python3 "$iond_stats" "$iond_dir/iond-$1.json" --segment-store; }
