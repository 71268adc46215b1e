"""One progress line per finished run, with an estimate of the time left.

The estimate for each remaining run is the mean wall time of the finished runs of the same
case (workload, rank count and mode; runs are interleaved, so after the first rep every case
has one), or of all finished runs before that.
"""

import collections


def format_duration(seconds):
    seconds = max(0, int(round(seconds)))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Progress:
    def __init__(self, planned_keys):
        """planned_keys: the case of every planned run (any hashable), in order."""
        self._planned = list(planned_keys)
        self._done = 0
        self._walls = collections.defaultdict(list)

    def finished(self, key, wall_s):
        """Records a run's wall time (start-up included: that is what the user waits for)."""
        self._done += 1
        self._walls[key].append(wall_s)

    def eta_s(self):
        everything = [w for walls in self._walls.values() for w in walls]
        if not everything:
            return None
        overall = sum(everything) / len(everything)
        left = 0.0
        for key in self._planned[self._done:]:
            walls = self._walls.get(key)
            left += sum(walls) / len(walls) if walls else overall
        return left

    def line(self, workload, ranks, mode, rep, reps, outcome):
        """"[ 12/180] simpario-read    4 ranks stagio-prefetch   rep 3/5   1.234 s  ETA 4m05s"."""
        width = len(str(len(self._planned)))
        eta = self.eta_s()
        left = "" if eta is None or self._done == len(self._planned) else \
            f"  ETA {format_duration(eta)}"
        return (f"[{self._done:>{width}}/{len(self._planned)}] {workload:<15} {ranks:>2} ranks "
                f"{mode:<17} rep {rep}/{reps}  {outcome}{left}")
