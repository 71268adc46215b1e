#!/usr/bin/env bash
# Bad configuration must never stop a job: each bad setting gets exactly one warning, from rank 0
# only, naming the setting and the value used, and the program still runs and gets right bytes.
#
#   config_warnings.sh DEMO LIBSTAGIO MPIEXEC
set -euo pipefail
demo=$1 lib=$2 mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/hints" <<'HINTS'
# a good line, a bad value and an unknown key
stagio_wb_high 10
stagio_wb_low lots
stagio_frobnicate 1
HINTS

# The demo checks every byte it reads and exits non-zero on a wrong one.
env LD_PRELOAD="$lib" STAGIO_HINTS="$work/hints" STAGIO_BLOCK_SIZE=abc STAGIO_BOGUS=1 \
    STAGIO_CACHE_SIZE=-5 \
    "$mpiexec" -n 2 "$demo" "$work/file" 4 64 0 >"$work/out" 2>"$work/err" || {
  echo "FAIL: the demo did not succeed under bad configuration"; cat "$work/out" "$work/err"; exit 1; }

failures=0
expect_once() {  # expect_once DESCRIPTION REGEX
  local count
  count=$(grep -cE "$2" "$work/err" || true)
  if [ "$count" -ne 1 ]; then
    echo "FAIL: expected exactly one warning about $1, got $count"
    failures=$((failures + 1))
  else
    echo "ok: one warning about $1"
  fi
}
expect_once "STAGIO_BLOCK_SIZE=abc" "^stagio: warning: .*'abc'.*stagio_block_size.*using 1M"
expect_once "STAGIO_CACHE_SIZE=-5" "^stagio: warning: .*'-5'.*stagio_cache_size.*using 64M"
expect_once "unknown STAGIO_BOGUS" "^stagio: warning: .*STAGIO_BOGUS"
expect_once "stagio_wb_low lots" "^stagio: warning: .*'lots'.*stagio_wb_low"
expect_once "stagio_frobnicate" "^stagio: warning: .*stagio_frobnicate"
grep -q "0 wrong bytes" "$work/out" || { echo "FAIL: demo output lacks '0 wrong bytes'"; failures=$((failures + 1)); }

# Settings files that are no files: a FIFO nobody writes (opening it would wait for a writer),
# endless devices (reading would never end). MPI_Init must not wait for them, and each gets one
# warning saying what it is. The timeout turns a hang into a failure.
mkfifo "$work/fifo"
for path in "$work/fifo" /dev/zero /dev/urandom; do
  if ! timeout 60 env LD_PRELOAD="$lib" STAGIO_HINTS="$path" \
         STAGIO_IOND="unix:$work/no-daemon" STAGIO_IOND_TOKEN_FILE="$path" \
         "$mpiexec" -n 2 "$demo" "$work/file" 4 64 0 >"$work/out" 2>"$work/err"; then
    echo "FAIL: the demo did not finish with STAGIO_HINTS=$path"; cat "$work/out" "$work/err"
    failures=$((failures + 1))
    continue
  fi
  expect_once "STAGIO_HINTS=$path" "^stagio: warning: cannot read the hints file .*$path is a"
  expect_once "STAGIO_IOND_TOKEN_FILE=$path" "^stagio: warning: stagio_iond_token_file: $path is a"
  grep -q "0 wrong bytes" "$work/out" || { echo "FAIL: wrong bytes with $path"; failures=$((failures + 1)); }
done
if [ "$failures" -ne 0 ]; then
  echo "--- stderr ---"; cat "$work/err"
  echo "0 passed, $failures failed"
  exit 1
fi
echo "config warnings: all passed"
