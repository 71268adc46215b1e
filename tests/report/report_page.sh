#!/usr/bin/env bash
# `stagio report` on a real job's stats, looked at in a real browser.
#
#   report_page.sh DEMO LIBSTAGIO STAGIO_COMMAND MPIEXEC
#
# Runs the demo (examples/demo.c) on 4 ranks under stagio with STAGIO_STATS, then `stagio
# report` on the stats file. The summary must end with a verdict and name the page. Headless
# Chromium then loads the page: the DOM it built must show the numbers of the stats file
# (check_page.py computes them from the JSON itself), and its screenshot must show the plots.
# Last, `stagio report` compares the job with a run of it with the cache off.
set -euo pipefail

demo=$1 library=$2 stagio=$3 mpiexec=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-report-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "report_page: no chromium (scripts/setup.sh installs it)" >&2
  exit 1
fi

timeout 120 "$mpiexec" -n 4 env LD_PRELOAD="$library" STAGIO_STATS="$work/stats.json" \
  "$demo" "$work/demo.dat" >"$work/demo.out" 2>&1 || { cat "$work/demo.out" >&2; exit 1; }

python3 "$stagio" report "$work/stats.json" -o "$work/page" | tee "$work/summary.txt"
grep -q "^  verdict: " "$work/summary.txt"
grep -q "^  page: $work/page/report.html$" "$work/summary.txt"
for plot in time.png bytes.png prefetch.png; do
  [[ -s $work/page/$plot ]] || { echo "report_page: $plot missing" >&2; exit 1; }
done

# Chromium as root needs --no-sandbox; its profile goes to the work directory.
chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/profile" "$@" "file://$work/page/report.html" 2>"$work/chromium.err"
}
chrome --dump-dom >"$work/dom.html" || { cat "$work/chromium.err" >&2; exit 1; }
chrome --window-size=1200,2400 --screenshot="$work/screenshot.png" >/dev/null ||
  { cat "$work/chromium.err" >&2; exit 1; }
/usr/bin/python3 "$here/check_page.py" "$work/stats.json" "$work/dom.html" "$work/screenshot.png"

# The same job with the cache off, every call passed to MPI-IO, compared with the first: both
# runs made the same reads and writes, so the comparison shows the same bytes, ratio 1.00.
timeout 120 "$mpiexec" -n 4 env LD_PRELOAD="$library" STAGIO_CACHE=disable \
  STAGIO_STATS="$work/uncached.json" "$demo" "$work/uncached.dat" >"$work/demo.out" 2>&1 ||
  { cat "$work/demo.out" >&2; exit 1; }
python3 "$stagio" report --no-page "$work/uncached.json" "$work/stats.json" | tee "$work/compare.txt"
grep -q "^  verdict: " "$work/compare.txt"
for what in read written; do
  read -r _ _ _ _ a a_unit b b_unit ratio < <(grep "^  $what by the program " "$work/compare.txt")
  if [[ "$a $a_unit" != "$b $b_unit" || $ratio != 1.00 ]]; then
    echo "report_page: $what by the program: $a $a_unit uncached, $b $b_unit cached" >&2
    exit 1
  fi
done
