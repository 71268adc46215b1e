"""results.md of the segstore suite: for each workload, every mode's time, I/O time and I/O
throughput against plain MPI-IO's and against stagio without the store, the storage requests,
and the daemon's segment-store counters; and the verdicts on the store's targets. Rendered from
the results dictionary alone, like report.py.
"""

from . import markdown
from . import metrics
from . import scaling_report
from . import segstore_targets
from . import summary as summary_table
from .iond_report import fmt_rate
from .markdown import fmt_count, fmt_ratio, fmt_seconds


def render_markdown(results):
    def tables(summary, workload, counts, modes):
        return (_workload_tables(summary, workload, counts, modes)
                + ["", "I/O time of each pass (s, the slowest rank's, median over the runs):", ""]
                + _pass_table(results.get("runs", []), workload, modes))
    return scaling_report.document(results, "the segment store", 16, segstore_targets.evaluate,
                                   tables, _legend)


def _pass_io_s(result):
    """The viewer's pass times in a result line: under "timings"; in results made before that
    field existed, under "result"."""
    for field in ("timings", "result"):
        times = (result.get(field) or {}).get("pass_io_s")
        if times:
            return times
    return None


def pass_times(runs, workload, mode):
    """The median I/O time of each pass of the workload's successful runs in `mode`, from the
    viewer's "pass_io_s"; [] when none has them."""
    per_run = [_pass_io_s(r.get("result") or {})
               for r in runs if r.get("ok") and r["workload"] == workload and r["mode"] == mode]
    per_run = [times for times in per_run if isinstance(times, list) and times]
    if not per_run:
        return []
    passes = min(len(times) for times in per_run)
    return [metrics.median([times[i] for times in per_run]) for i in range(passes)]


def _pass_table(runs, workload, modes):
    shown = {mode: pass_times(runs, workload, mode) for mode in modes}
    passes = max((len(times) for times in shown.values()), default=0)
    if passes == 0:
        return ["(no pass times in these results)"]
    header = ["mode"] + [f"pass {i + 1}" for i in range(passes)]
    rows = [[mode] + [fmt_seconds(times[i]) if i < len(times) else markdown.NA
                      for i in range(passes)] for mode, times in shown.items()]
    return markdown.table(header, rows)


def _percent(value):
    return markdown.NA if value is None else f"{value:.1%}"


def _workload_tables(summary, workload, counts, modes):
    ran = [r for w, r in segstore_targets.cases(summary, [workload], counts)]
    header = ["ranks", "mode", "T (s)", "I/O (s)", "throughput (MB/s)", "x plain",
              "x stagio-iond", "storage requests", "group hits after the first group",
              "bytes from segments", "segments written", "grouping runs (yields)"]
    rows = []
    for ranks in ran:
        for mode in modes:
            entry = summary_table.entry(summary, workload, ranks, mode)
            store = entry.get("segment_store") or {}
            grouping = (markdown.NA if not store else
                        f"{store.get('grouping_runs', 0)} ({store.get('grouping_yields', 0)})")
            rows.append([
                str(ranks), mode, scaling_report.time_cell(entry),
                fmt_seconds(entry.get("io_median_s")), fmt_rate(entry.get("throughput_mbps")),
                fmt_ratio(segstore_targets.throughput_gain(summary, workload, ranks, mode,
                                                           segstore_targets.PLAIN)),
                fmt_ratio(segstore_targets.throughput_gain(summary, workload, ranks, mode,
                                                           segstore_targets.IOND)),
                fmt_count(entry.get("emulator_requests")),
                _percent(store.get("group_hit_rate_after_first_group")),
                fmt_count(store.get("bytes_from_segments")),
                fmt_count(store.get("segments_written")),
                grouping])
    return markdown.table(header, rows)


def _legend(modes):
    return markdown.modes_legend(modes) + [
        "- T = the workload's own elapsed time (barrier to barrier), pauses between passes "
        "included, median of the successful runs. I/O = the time the slowest rank spent in "
        "MPI-IO calls (open, set_view, read, close), median: the pauses are not in it.",
        "- throughput = bytes read / I/O time, median over the runs; x plain and x stagio-iond "
        "= the mode's throughput over that mode's.",
        "- storage requests = requests the emulated device saw per run (median): the "
        "application's in plain, the daemon's in the other modes (its grouping reads, made "
        "in the pauses, included).",
        "- The segment-store counters are summed over the runs: group hits after the first "
        "group = the daemon's storage reads served wholly from segments, among those made once "
        "the store held a first group (after the first pass); bytes from segments; segments "
        "written by grouping; grouping runs finished, and stopped because a request came.",
    ]
