"""From raw runs to the per workload/mode numbers the report shows.

Only successful runs count. Times are the workloads' own elapsed_s (barrier to barrier). Ratios
and overlap efficiency compare medians of modes measured in the same harness run, interleaved,
so machine noise falls on all modes alike.
"""

from . import metrics
from . import modes
from . import stats


def summarize(runs, workload_names, mode_names):
    """{workload: {mode: entry}} for every requested pair, even those with no successful run
    (their numbers are None), so a report always has the same shape."""
    summary = {}
    for workload in workload_names:
        per_mode = {}
        for mode in mode_names:
            chosen = [r for r in runs if r["workload"] == workload and r["mode"] == mode]
            per_mode[mode] = _mode_entry(chosen)
        _add_comparisons(per_mode)
        summary[workload] = per_mode
    return summary


def _mode_entry(runs):
    good = [r for r in runs if r.get("ok")]
    times = [r["result"]["elapsed_s"] for r in good]
    median, low, high = metrics.spread(times)
    entry = {
        "runs": len(good),
        "failed": len(runs) - len(good),
        "median_s": median,
        "min_s": low,
        "max_s": high,
        "elapsed_s": times,
    }
    stagio_runs = [r.get("stagio_stats") for r in good]
    if good and all(s is not None for s in stagio_runs):
        # Summed over reps: accuracy and coverage are then weighted by how much each rep did.
        counters = stats.sum_counters(stagio_runs, stats.STAGIO_COUNTERS)
        entry["stagio"] = counters
        entry["prefetch_accuracy"] = stats.prefetch_accuracy(counters)
        entry["prefetch_coverage"] = stats.prefetch_coverage(counters)
    else:
        entry["stagio"] = None
        entry["prefetch_accuracy"] = None
        entry["prefetch_coverage"] = None
    emulator_runs = [r.get("emulator_stats") for r in good if r.get("emulator_stats")]
    for counter in ("requests", "read_requests", "write_requests"):
        entry["emulator_" + counter] = metrics.median(
            [e.get(counter) for e in emulator_runs]) if emulator_runs else None
    return entry


def _add_comparisons(per_mode):
    """Adds vs_plain (T_mode / T_plain) to every mode and overlap_efficiency to every mode that
    is neither the baseline nor the bound."""
    t_plain = per_mode.get(modes.BASELINE, {}).get("median_s")
    t_ideal = per_mode.get(modes.BOUND, {}).get("median_s")
    for name, entry in per_mode.items():
        entry["vs_plain"] = metrics.ratio(entry["median_s"], t_plain)
        entry["overlap_efficiency"] = metrics.overlap_efficiency(
            t_plain, entry["median_s"], t_ideal) if modes.is_compared(name) else None
