"""Checks the page `stagio report` wrote, as a browser rendered it, against its stats file.

    check_page.py STATS.json DOM.html SCREENSHOT.png

The expected numbers are computed here from the JSON, not with the report's code: the reads
and writes the program made, the cache hit ratio, one row per rank with its run time. The
DOM is the one headless Chromium built from the page (--dump-dom), so the tables were parsed
and laid out by a browser. The screenshot must show the plots: a plot's bars are the only
large areas of stagio blue (#1f77b4) on the page.
"""

import json
import sys
from html.parser import HTMLParser

import matplotlib.image


class Tables(HTMLParser):
    """The text of each cell of each table with an id, row by row; and the images."""

    def __init__(self):
        super().__init__()
        self.tables, self.images = {}, []
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and "id" in attrs:
            self._table = self.tables.setdefault(attrs["id"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "img":
            self.images.append(attrs.get("src", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def mib(count):
    return f"{count / 2 ** 20:.2f} MiB"


def main(stats_path, dom_path, screenshot_path):
    with open(stats_path) as handle:
        stats = json.load(handle)
    with open(dom_path) as handle:
        page = Tables()
        page.feed(handle.read())
    failures = []

    def expect(what, seen, wanted):
        if seen != wanted:
            failures.append(f"{what}: the page shows {seen!r}, the stats say {wanted!r}")

    total = stats["total"]
    job = {row[0]: row[1] for row in page.tables.get("job", []) if len(row) == 2}
    for direction in ("read", "written"):
        kinds = [c for k, c in total["calls"].items() if ("read" in k) == (direction == "read")]
        calls, moved = sum(c["calls"] for c in kinds), sum(c["bytes"] for c in kinds)
        expect(f"{direction} by the program", job.get(f"{direction} by the program"),
               f"{mib(moved)} in {calls} calls")
    hits, misses = total["cache_hits"], total["cache_misses"]
    ratio = f"{100 * hits / (hits + misses):.0f}%" if hits + misses else "n/a"
    expect("cache hit ratio", job.get("cache hit ratio"), f"{ratio} ({hits} hits, {misses} misses)")
    ranks = page.tables.get("ranks", [])[1:]
    expect("rank rows", len(ranks), stats["ranks"])
    for row, entry in zip(ranks, stats["per_rank"]):
        expect(f"rank {entry['rank']}", row[:3],
               [str(entry["rank"]), entry["host"], f"{entry['run_s']:.3f} s"])
    files = [row[0] for row in page.tables.get("files", [])[1:]]
    expect("files", sorted(files), sorted(total["files"]))
    embedded = [src for src in page.images if src.startswith("data:image/png;base64,")]
    expect("embedded plots", len(embedded), 3)

    pixels = matplotlib.image.imread(screenshot_path)[:, :, :3]
    blue = ((abs(pixels[:, :, 0] - 0x1f / 255) < 0.03) & (abs(pixels[:, :, 1] - 0x77 / 255) < 0.03)
            & (abs(pixels[:, :, 2] - 0xb4 / 255) < 0.03)).sum()
    if blue < 2000:
        failures.append(f"the screenshot has {blue} pixels of the plots' blue: no plot shown")

    for failure in failures:
        print(f"check_page: {failure}", file=sys.stderr)
    if not failures:
        print(f"check_page: the page shows the stats' numbers; {blue} pixels of plot bars")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
