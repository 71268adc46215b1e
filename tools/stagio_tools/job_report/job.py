"""A job's stats document, read and checked, and the metrics the report derives from it.

The document (written by stagio at MPI_Finalize) holds, per rank and summed over ranks, a
RECORD per file: counters and a table of calls. Documents written before a counter existed lack
it: every counter is optional and reads as 0, and what cannot be derived is None ("n/a").
"""

import json
from dataclasses import dataclass, field


class StatsError(Exception):
    """The file cannot be read as a stagio stats document; the message says why."""


@dataclass
class Record:
    """One RECORD: a file's (or the job's) counters and its calls by kind."""
    counters: dict
    calls: dict

    def get(self, name):
        value = self.counters.get(name, 0)
        return value if isinstance(value, (int, float)) else 0

    def _calls(self, direction, what):
        return sum(entry.get(what, 0) for kind, entry in self.calls.items()
                   if direction in kind and isinstance(entry, dict))

    @property
    def read_calls(self):
        return self._calls("read", "calls")

    @property
    def read_bytes(self):
        return self._calls("read", "bytes")

    @property
    def write_calls(self):
        return self._calls("write", "calls")

    @property
    def write_bytes(self):
        return self._calls("write", "bytes")

    @property
    def hit_ratio(self):
        return _share(self.get("cache_hits"), self.get("cache_hits") + self.get("cache_misses"))

    @property
    def accuracy(self):
        """Prefetched blocks a read then used, of those fetched."""
        return _share(self.get("prefetch_used"), self.get("prefetch_issued"))

    @property
    def coverage(self):
        """Storage reads the program needed that prefetching made ahead of time."""
        used = self.get("prefetch_used")
        return _share(used, used + self.get("demand_fetches"))

    @property
    def wasted_share(self):
        return _share(self.get("prefetch_wasted"), self.get("prefetch_issued"))

    @property
    def late_share(self):
        """Used prefetched blocks that a read still had to wait for."""
        return _share(self.get("prefetch_late"), self.get("prefetch_used"))

    @property
    def blocked_s(self):
        return self.get("blocked_ns") / 1e9

    @property
    def read_blocked_s(self):
        return self.get("read_blocked_ns") / 1e9

    @property
    def moved_bytes(self):
        return self.read_bytes + self.write_bytes


@dataclass
class Rank:
    rank: int
    host: str
    run_s: object  # float, or None in documents without it
    total: Record

    @property
    def blocked_share(self):
        return None if not self.run_s else min(1.0, self.total.blocked_s / self.run_s)


@dataclass
class Job:
    path: str
    version: str
    settings: dict
    total: Record
    files: dict = field(default_factory=dict)  # path -> Record, summed over ranks
    ranks: list = field(default_factory=list)  # Rank, in rank order

    @property
    def run_s(self):
        """The job's run time: its slowest rank's (None if no rank has one)."""
        times = [r.run_s for r in self.ranks if r.run_s]
        return max(times) if times else None

    @property
    def hosts(self):
        return sorted({r.host for r in self.ranks if r.host})

    def setting(self, key):
        return self.settings.get(key)

    @property
    def blocked_share(self):
        """Time the ranks spent inside stagio, of their run time (summed over ranks)."""
        runs = [r for r in self.ranks if r.run_s]
        total_run = sum(r.run_s for r in runs)
        return _share(sum(r.total.blocked_s for r in runs), total_run) if total_run else None

    def imbalance(self):
        """(slowest rank, its blocked time over the mean), or None with too little to compare."""
        if len(self.ranks) < 2:
            return None
        blocked = [r.total.blocked_s for r in self.ranks]
        mean = sum(blocked) / len(blocked)
        if mean <= 0:
            return None
        slowest = max(self.ranks, key=lambda r: r.total.blocked_s)
        return slowest, slowest.total.blocked_s / mean

    def busiest_files(self, count):
        """The files that moved the most bytes, most first."""
        return sorted(self.files.items(), key=lambda item: -item[1].moved_bytes)[:count]


def load(path):
    """The Job of the stats document at `path`; StatsError if it is not one."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as error:
        raise StatsError(f"{path}: cannot read it: {error.strerror}") from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise StatsError(f"{path}: not JSON ({error})") from error
    return from_document(document, path)


def from_document(document, path="stats"):
    if not isinstance(document, dict) or not isinstance(document.get("total"), dict) or \
            not isinstance(document.get("per_rank", []), list):
        raise StatsError(f"{path}: not a stagio stats document (no \"total\" object); it is "
                         "the file STAGIO_STATS names, written at MPI_Finalize")
    total = document["total"]
    files = total.get("files", {})
    if not isinstance(files, dict):
        raise StatsError(f"{path}: \"total\".\"files\" is not an object")
    ranks = []
    for entry in document.get("per_rank", []):
        if not isinstance(entry, dict):
            raise StatsError(f"{path}: a \"per_rank\" entry is not an object")
        run_s = entry.get("run_s")
        ranks.append(Rank(rank=entry.get("rank", len(ranks)), host=str(entry.get("host", "")),
                          run_s=run_s if isinstance(run_s, (int, float)) else None,
                          total=_record(entry.get("total", {}))))
    settings = document.get("settings", {})
    return Job(path=path, version=str(document.get("stagio_version", "?")),
               settings=settings if isinstance(settings, dict) else {},
               total=_record(total),
               files={name: _record(record) for name, record in files.items()},
               ranks=ranks)


def _record(raw):
    if not isinstance(raw, dict):
        return Record({}, {})
    calls = raw.get("calls", {})
    counters = {k: v for k, v in raw.items() if k not in ("calls", "files")}
    return Record(counters, calls if isinstance(calls, dict) else {})


def _share(part, whole):
    return part / whole if whole else None
