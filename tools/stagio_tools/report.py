"""results.md: the benchmark results as Markdown, rendered from the results dictionary alone.

Everything shown comes from the dictionary that is also saved as results.json, so a report can
be re-rendered later from the JSON (and tested from a fixed dictionary).
"""

from . import iond_report
from . import iond_sweep_report
from . import markdown
from . import modes as mode_table
from . import preexec_report
from . import results_view
from . import scaling_report
from . import segstore_report
from . import slice_report
from . import suites
from . import summary as summary_table
from .markdown import fmt_count, fmt_percent, fmt_ratio, fmt_seconds


def render_markdown(results):
    """The whole results.md text, in the form of the results' suite."""
    kind = suites.suite_of(results).report
    if kind == suites.SCALING:
        return scaling_report.render_markdown(results)
    if kind == suites.PREEXEC:
        return preexec_report.render_markdown(results)
    if kind == suites.IOND:
        return iond_report.render_markdown(results)
    if kind == suites.IOND_SWEEP:
        return iond_sweep_report.render_markdown(results)
    if kind == suites.SEGSTORE:
        return segstore_report.render_markdown(results)
    if kind == suites.SLICE:
        return slice_report.render_markdown(results)
    return render_per_mode(results)


def render_per_mode(results):
    """An overview and a table per workload with every mode's numbers; with several rank
    counts, one such set per count."""
    shown = results_view.view(results)
    lines = ["# stagio bench results", ""]
    lines += markdown.header(results)
    for ranks in shown.rank_counts:
        at = f", {ranks} ranks" if len(shown.rank_counts) > 1 else ""
        lines += ["", f"## Overview{at}", ""]
        lines += _overview(shown.summary, shown.workloads, ranks, shown.modes)
        for workload in shown.workloads:
            lines += ["", f"## {workload}{at}", ""]
            lines += _workload_section(results, workload, ranks, shown.modes)
    lines += markdown.failures_section(results)
    lines += ["", "## Legend", ""]
    lines += _legend(shown.modes)
    return "\n".join(lines) + "\n"


def _overview(summary, workloads, ranks, modes):
    stagio_modes = [m for m in modes if mode_table.is_compared(m)]
    header = ["workload"] + [f"T_{m} (s)" for m in modes]
    header += [f"{m}/{mode_table.baseline_among(modes)}" for m in stagio_modes]
    header += [f"overlap {m}" for m in stagio_modes]
    rows = []
    for workload in workloads:
        entries = {m: summary_table.entry(summary, workload, ranks, m) for m in modes}
        row = [workload] + [fmt_seconds(entries[m].get("median_s")) for m in modes]
        row += [fmt_ratio(entries[m].get("vs_plain")) for m in stagio_modes]
        row += [fmt_percent(entries[m].get("overlap_efficiency")) for m in stagio_modes]
        rows.append(row)
    return markdown.table(header, rows)


def _workload_section(results, workload, ranks, modes):
    lines = markdown.workload_description(results, workload)
    header = ["mode", "median (s)", "min (s)", "max (s)", "runs", "vs plain", "CPU (s/rank)",
              "overlap eff.", "prefetch acc.", "prefetch cov.", "storage requests"]
    rows = []
    for mode in modes:
        entry = summary_table.entry(results.get("summary", {}), workload, ranks, mode)
        runs = str(entry.get("runs", 0))
        if entry.get("failed"):
            runs += f" ({entry['failed']} failed)"
        rows.append([mode, fmt_seconds(entry.get("median_s")), fmt_seconds(entry.get("min_s")),
                     fmt_seconds(entry.get("max_s")), runs, fmt_ratio(entry.get("vs_plain")),
                     fmt_seconds(entry.get("cpu_s_per_rank")),
                     fmt_percent(entry.get("overlap_efficiency")),
                     fmt_percent(entry.get("prefetch_accuracy")),
                     fmt_percent(entry.get("prefetch_coverage")),
                     fmt_count(entry.get("emulator_requests"))])
    return lines + markdown.table(header, rows)


def _legend(modes):
    return markdown.modes_legend(modes) + [
        "- Times are the workload's own elapsed time (barrier to barrier, rank 0), median of the "
        "successful runs, with min and max.",
        "- vs plain = T_mode / T_plain (ratio of medians from this run; below 1 is faster).",
        "- CPU (s/rank) = user and system CPU time of the timed part, every thread of a rank's "
        "process (stagio's included), averaged over the ranks; median of the runs. MPICH's "
        "busy polling inside MPI calls counts too, in every mode.",
        "- overlap eff. = (T_plain − T_mode) / (T_plain − T_ideal): the share of the I/O time "
        "the mode hid; 100% = as fast as compute alone, negative = slower than plain; n/a when "
        "T_plain ≤ T_ideal or a time is missing.",
        "- prefetch acc. = prefetch_used / prefetch_issued; prefetch cov. = prefetch_used / "
        "(prefetch_used + demand_fetches); from stagio's counters summed over the runs; n/a "
        "when stagio does not report the counters, or nothing was issued or fetched.",
        "- storage requests = requests the storage emulator saw per run (median): reads, writes "
        "and syncs of the timed part, the untimed --verify-output reads, and stagio's "
        "write-back at finalize; n/a for `ideal`, which runs without the emulator.",
    ]
