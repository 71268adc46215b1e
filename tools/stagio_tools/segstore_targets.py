"""The targets of the segment store (seed 002), checked against a summary of the segstore suite.

  1. The repeated overlapped non-contiguous reads (viewer-zoom, viewer-tiles) at least
     BANDWIDTH_GAIN (2.3x, above the seed's best case, +230%) plain MPI-IO's bandwidth with the
     segment store: its I/O throughput (bytes read over the time in MPI-IO calls, open and close
     included) over plain's, on every such case.
  2. A group hit rate of at least HIT_RATE (85%) from the second pass: the daemon's reads that
     came wholly from segments, among those made once the store held its first group (which it
     makes in the pause after the first pass), summed over the reps; on every repeated case.
  3. The read-once scan (viewer-scan) within SCAN_SLACK (3%) of stagio without the store: the
     median I/O time with the store at most 1.03 times the median without.

A case is a workload at a rank count it ran at. A target whose numbers are missing is not judged.
"""

from . import metrics
from . import summary as summary_table
from . import verdicts
from .iond_targets import cases, throughput_gain

PLAIN, IOND, SEGSTORE = "plain", "stagio-iond", "stagio-segstore"
REPEATED = ("viewer-zoom", "viewer-tiles")
READ_ONCE = ("viewer-scan",)
BANDWIDTH_GAIN = 2.3
HIT_RATE = 0.85
SCAN_SLACK = 1.03


def group_hit_rate(summary, workload, ranks, mode=SEGSTORE):
    """The mode's group hit rate after its first group, or None."""
    store = summary_table.entry(summary, workload, ranks, mode).get("segment_store") or {}
    return store.get("group_hit_rate_after_first_group")


def io_time_ratio(summary, workload, ranks, mode, over):
    entry = lambda m: summary_table.entry(summary, workload, ranks, m)  # noqa: E731
    return metrics.ratio(entry(mode).get("io_median_s"), entry(over).get("io_median_s"))


def evaluate(summary, workloads, rank_counts):
    measured = cases(summary, workloads, rank_counts)
    repeated = [c for c in measured if c[0] in REPEATED]
    once = [c for c in measured if c[0] in READ_ONCE]
    return [_bandwidth(summary, repeated), _hit_rate(summary, repeated), _scan(summary, once)]


def _case(workload, ranks):
    return f"{workload} at {ranks} ranks"


def _judge(target, measured, value, shown, met, missing):
    """The verdict of a target every case must meet: value(workload, ranks) is the case's
    number (None: not measured), shown(number) its text and met(number) whether it meets it."""
    cases = []
    for workload, ranks in measured:
        number = value(workload, ranks)
        if number is not None:
            cases.append((f"{_case(workload, ranks)}: {shown(number)}", met(number)))
    return verdicts.every_case(target, cases, missing)


def _bandwidth(summary, measured):
    return _judge(
        f"Repeated overlapping non-contiguous reads: bandwidth with the segment store "
        f"≥ {BANDWIDTH_GAIN:g}x plain MPI-IO's", measured,
        lambda w, r: throughput_gain(summary, w, r, SEGSTORE, PLAIN),
        lambda gain: f"{gain:.2f}x", lambda gain: gain >= BANDWIDTH_GAIN,
        "no repeated-read case with both modes measured")


def _hit_rate(summary, measured):
    return _judge(
        f"Group hit rate from the second pass ≥ {HIT_RATE:.0%}", measured,
        lambda w, r: group_hit_rate(summary, w, r),
        lambda rate: f"{rate:.1%}", lambda rate: rate >= HIT_RATE,
        "no segment-store counters (did grouping run?)")


def _scan(summary, measured):
    return _judge(
        f"Read-once scan: I/O time with the segment store within {SCAN_SLACK - 1:.0%} of "
        f"stagio without it", measured,
        lambda w, r: io_time_ratio(summary, w, r, SEGSTORE, IOND),
        lambda ratio: f"{ratio:.3f}x", lambda ratio: ratio <= SCAN_SLACK,
        "no read-once case with both modes measured")
