"""From raw runs to the per workload/rank count/mode numbers the reports show.

Only successful runs count. Times are the workloads' own elapsed_s (barrier to barrier). Ratios
and overlap efficiency compare medians of modes measured in the same harness run, interleaved,
so machine noise falls on all modes alike.

Shape: {workload: {ranks: {mode: entry}}}, ranks as a string ("4"), as JSON keys must be, so
that a summary read back from results.json is the same as the one written.
"""

from . import metrics
from . import modes
from . import stats


def summarize(runs, workload_names, rank_counts, mode_names):
    """The summary of every requested case, even those with no successful run (their numbers
    are None), so a report always has the same shape."""
    summary = {}
    for workload in workload_names:
        per_count = {}
        for ranks in rank_counts:
            per_mode = {}
            for mode in mode_names:
                chosen = [r for r in runs if r["workload"] == workload and r["mode"] == mode
                          and r.get("ranks") == ranks]
                per_mode[mode] = _mode_entry(chosen)
            _add_comparisons(per_mode)
            per_count[str(ranks)] = per_mode
        summary[workload] = per_count
    return summary


def entry(summary, workload, ranks, mode):
    """One case's entry, {} when the summary lacks it."""
    return summary.get(workload, {}).get(str(ranks), {}).get(mode, {})


def _mode_entry(runs):
    good = [r for r in runs if r.get("ok")]
    times = [r["result"]["elapsed_s"] for r in good]
    median, low, high = metrics.spread(times)
    result = {
        "runs": len(good),
        "failed": len(runs) - len(good),
        "median_s": median,
        "min_s": low,
        "max_s": high,
        "elapsed_s": times,
    }
    # CPU seconds per rank of the timed part, every thread of the process (stagio's included):
    # what the run took from the cores the program computes on.
    result["cpu_s_per_rank"] = metrics.median([r["result"].get("cpu_s_mean") for r in good])
    stagio_runs = [r.get("stagio_stats") for r in good]
    if good and all(s is not None for s in stagio_runs):
        # Summed over reps: accuracy and coverage are then weighted by how much each rep did.
        counters = stats.sum_counters(stagio_runs, stats.STAGIO_COUNTERS)
        result["stagio"] = counters
        result["prefetch_accuracy"] = stats.prefetch_accuracy(counters)
        result["prefetch_coverage"] = stats.prefetch_coverage(counters)
    else:
        result["stagio"] = None
        result["prefetch_accuracy"] = None
        result["prefetch_coverage"] = None
    emulator_runs = [r.get("emulator_stats") for r in good if r.get("emulator_stats")]
    for counter in ("requests", "read_requests", "write_requests"):
        result["emulator_" + counter] = metrics.median(
            [e.get(counter) for e in emulator_runs]) if emulator_runs else None
    result["mean_request_bytes"] = stats.mean_request_bytes(emulator_runs)
    result["transfer_s"] = metrics.median([stats.transfer_seconds(e) for e in emulator_runs])
    # The I/O alone (the iond suites' throughput, seed 004's measure): time in MPI-IO calls,
    # open and close included, the slowest rank's; and bytes moved over it.
    result["io_median_s"] = metrics.median([r["result"].get("io_s") for r in good])
    result["throughput_mbps"] = metrics.median([metrics.io_throughput_mbps(r["result"])
                                                for r in good])
    iond = [r.get("iond") or {} for r in good]
    result["iond_shutdown_s"] = metrics.median([i.get("iond_shutdown_s") for i in iond])
    result["app_direct_requests"] = metrics.median([(i.get("app_direct") or {}).get("requests")
                                                    for i in iond])
    result["segment_store"] = segment_store_counters(
        [(i.get("daemon") or {}).get("segment_store") for i in iond])
    return result


# What the store was at shutdown, not what it did: not summed over runs.
_STORE_STATE = ("segment_size", "capacity_segments", "segments_held", "location")


def segment_store_counters(stores):
    """The daemon's segment-store counters summed over the runs, its rates made again from
    the sums; None unless every run has them."""
    if not stores or not all(stores):
        return None
    total = {}
    for store in stores:
        for name, value in store.items():
            if name in _STORE_STATE:
                continue
            if isinstance(value, int) and not isinstance(value, bool):
                total[name] = total.get(name, 0) + value
    total["group_hit_rate"] = metrics.ratio(total.get("read_hits"), total.get("reads"))
    total["group_hit_rate_after_first_group"] = metrics.ratio(
        total.get("read_hits_after_first_group"), total.get("reads_after_first_group"))
    moved = total.get("bytes_from_segments", 0) + total.get("bytes_from_storage", 0)
    total["byte_hit_rate"] = metrics.ratio(total.get("bytes_from_segments"), moved)
    return total


def _add_comparisons(per_mode):
    """Adds vs_plain (T_mode / T_plain) and speedup (its inverse) to every mode,
    overlap_efficiency to every mode that is neither the baseline nor the bound, and to the
    baseline speedup_bound: what hiding all I/O could gain, given the device's bandwidth."""
    baseline_name = modes.baseline_among(per_mode)
    t_plain = per_mode.get(baseline_name, {}).get("median_s")
    t_ideal = per_mode.get(modes.BOUND, {}).get("median_s")
    if baseline_name in per_mode:
        baseline = per_mode[baseline_name]
        baseline["speedup_bound"] = metrics.speedup_bound(t_plain, t_ideal,
                                                          baseline["transfer_s"])
    for name, result in per_mode.items():
        result["vs_plain"] = metrics.ratio(result["median_s"], t_plain)
        result["speedup"] = metrics.ratio(t_plain, result["median_s"])
        result["overlap_efficiency"] = metrics.overlap_efficiency(
            t_plain, result["median_s"], t_ideal) if modes.is_compared(name) else None
