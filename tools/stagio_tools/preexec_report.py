"""results.md of the pre-execution suite: for each example, every mode's time against the rank
count, how much shorter than plain MPI-IO each stagio mode ran, the share of the bound it
reached, stagio's pre-execution counters, and the verdicts on issue 5's targets. Rendered from
the results dictionary alone, like report.py.
"""

from . import markdown
from . import modes as mode_table
from . import preexec_targets
from . import scaling_report
from . import summary as summary_table
from .markdown import fmt_count, fmt_percent

# stagio's counters shown per run: (column, counter, format).
PREEXEC_COLUMNS = (
    ("prefetches", "prefetch_issued", fmt_count),
    ("used", "prefetch_used", fmt_count),
    ("preexec calls", "preexec_calls", fmt_count),
    ("skipped (lagging)", "preexec_skipped_lagging", fmt_count),
    ("dirty waits", "preexec_dirty_waits", fmt_count),
    ("gate waits", "preexec_gate_waits", fmt_count),
    ("budget waits", "preexec_budget_waits", fmt_count),
)


def render_markdown(results):
    return scaling_report.document(results, "pre-execution prefetching", 5,
                                   preexec_targets.evaluate, _workload_tables, _legend)


def _workload_tables(summary, workload, counts, modes):
    return (["Time (s, median), how much shorter than plain MPI-IO, and the share of the bound "
             "(T_plain − T_mode) / (T_plain − T_ideal):", ""]
            + time_table(summary, workload, counts, modes)
            + ["", "Storage requests (emulator) and stagio's counters, per run:", ""]
            + scaling_report.storage_table(summary, workload, counts, modes, PREEXEC_COLUMNS))


def time_table(summary, workload, counts, modes):
    """One row per rank count: every mode's median time, then each stagio mode's reduction and
    share of the bound."""
    compared = [m for m in modes if mode_table.is_compared(m)]
    header = ["ranks"] + [f"T {m}" for m in modes]
    header += [f"shorter {m}" for m in compared] + [f"of bound {m}" for m in compared]
    rows = []
    for ranks in counts:
        entries = {m: summary_table.entry(summary, workload, ranks, m) for m in modes}
        row = [str(ranks)] + [scaling_report.time_cell(entries[m]) for m in modes]
        row += [fmt_percent(preexec_targets.reduction(entries[m])) for m in compared]
        row += [fmt_percent(entries[m].get("overlap_efficiency")) for m in compared]
        rows.append(row)
    return markdown.table(header, rows)


def _legend(modes):
    return markdown.modes_legend(modes) + [
        "- T = the workload's own elapsed time (barrier to barrier), median of the successful "
        "runs; min and max are in results.json.",
        "- shorter = 1 − T_mode / T_plain; of bound = (T_plain − T_mode) / "
        "(T_plain − T_ideal), the share of the time the optimum saves that the mode saved "
        "(100% = as fast as the "
        "optimum; over 100% when stagio also hides writes the optimum makes, as the Hill "
        "cipher's; n/a when T_plain ≤ T_ideal).",
        "- `-saturated` workloads run on their own, narrow device (see each one's section): "
        "there the device, not the compute, bounds every mode, and PP and PPIS differ in how "
        "the helper's fetches meet the main thread's I/O.",
        "- requests = storage requests the emulator saw per run (median); mean request = bytes "
        "moved / data requests over all runs.",
        "- prefetches and used (prefetch_issued, prefetch_used), preexec calls (the helper's "
        "prefetch calls), skipped (lagging: the main thread had already started the call), "
        "dirty waits (a prefetch read waited for the main thread's write), gate waits (PPIS: "
        "the helper held a storage request back while the main thread was in I/O) and budget "
        "waits (the helper was a cache's worth ahead and waited): stagio's counters summed "
        "over ranks, mean per run; n/a when stagio does not report them.",
    ]
