"""results.md of a scaling suite (the collective one): how each mode's speed-up over plain
MPI-IO, its storage requests and stagio's collective counters change with the rank count, and
the verdicts on issue 4's targets. Rendered from the results dictionary alone, like report.py.
"""

from . import collective_targets
from . import markdown
from . import metrics
from . import modes as mode_table
from . import results_view
from . import summary as summary_table
from . import verdicts
from .markdown import fmt_bytes, fmt_count, fmt_ratio, fmt_seconds

def render_markdown(results):
    return document(results, "scaling with the rank count", 4, collective_targets.evaluate,
                    _workload_tables, _legend)


def document(results, title, issue, evaluate, workload_tables, legend):
    """The form the reports of the scaling suites share: the header, the issue's targets
    (evaluate(summary, workloads, rank counts) -> verdicts), a section per workload (its
    description, then workload_tables(summary, workload, rank counts, modes) -> lines), the
    failed runs and the legend (legend(modes) -> lines)."""
    shown = results_view.view(results)
    lines = [f"# stagio bench results: {title}", ""] + markdown.header(results)
    lines += ["", f"## Targets (issue {issue})", ""]
    lines += verdicts.table(evaluate(shown.summary, shown.workloads, shown.rank_counts))
    for workload in shown.workloads:
        lines += ["", f"## {workload}", ""] + markdown.workload_description(results, workload)
        lines += workload_tables(shown.summary, workload, shown.rank_counts, shown.modes)
    lines += markdown.failures_section(results)
    lines += ["", "## Legend", ""] + legend(shown.modes)
    return "\n".join(lines) + "\n"


def _workload_tables(summary, workload, counts, modes):
    return (["Time (s, median) and speed-up over plain MPI-IO:", ""]
            + speedup_table(summary, workload, counts, modes)
            + ["", "Storage requests (emulator) and stagio's counters, per run:", ""]
            + storage_table(summary, workload, counts, modes))


def _compared(modes):
    return [m for m in modes if mode_table.is_compared(m)]


def _pair_present(modes):
    return collective_targets.INDIVIDUAL in modes and collective_targets.COLLECTIVE in modes


def speedup_table(summary, workload, counts, modes):
    """One row per rank count: every mode's median time, the bound (the speed-up hiding all
    I/O would give, see metrics.speedup_bound), each stagio mode's speed-up, and collective's
    speed-up over individual's."""
    compared = _compared(modes)
    header = ["ranks"] + [f"T {m}" for m in modes] + ["bound"]
    header += [f"speed-up {m}" for m in compared]
    if _pair_present(modes):
        header.append("collective / individual")
    rows = []
    for ranks in counts:
        entries = {m: summary_table.entry(summary, workload, ranks, m) for m in modes}
        row = [str(ranks)] + [time_cell(entries[m]) for m in modes]
        row.append(fmt_ratio(entries.get(mode_table.BASELINE, {}).get("speedup_bound")))
        row += [fmt_ratio(entries[m].get("speedup")) for m in compared]
        if _pair_present(modes):
            row.append(fmt_ratio(_speedup_factor(entries)))
        rows.append(row)
    return markdown.table(header, rows)


def time_cell(entry):
    """A median time, with the number of failed runs when some failed."""
    text = fmt_seconds(entry.get("median_s"))
    return text + (f" ({entry['failed']} failed)" if entry.get("failed") else "")


def _speedup_factor(entries):
    return metrics.ratio(entries[collective_targets.COLLECTIVE].get("speedup"),
                         entries[collective_targets.INDIVIDUAL].get("speedup"))


# stagio's counters shown per run: (column, counter, format).
STAGIO_COLUMNS = (
    ("prefetches", "prefetch_issued", fmt_count),
    ("redundant", "prefetch_redundant", fmt_count),
    ("exchanged", "exchanged_bytes", fmt_bytes),
    ("remote requests", "remote_requests", fmt_count),
)


def storage_table(summary, workload, counts, modes, columns=STAGIO_COLUMNS):
    """One row per rank count and emulated mode: the storage requests and their mean size as
    the emulator saw them (the same measure for every mode), and stagio's counters (`columns`,
    as STAGIO_COLUMNS)."""
    shown = [m for m in modes if m != mode_table.BOUND]
    header = ["ranks", "mode", "requests", "mean request"] + [c for c, _, _ in columns]
    rows = []
    for ranks in counts:
        for mode in shown:
            entry = summary_table.entry(summary, workload, ranks, mode)
            row = [str(ranks), mode, fmt_count(entry.get("emulator_requests")),
                   fmt_bytes(entry.get("mean_request_bytes"))]
            row += [form(_per_run(entry, counter)) for _, counter, form in columns]
            rows.append(row)
    return markdown.table(header, rows)


def _per_run(entry, counter):
    """A stagio counter's mean per successful run (the summary holds their sum)."""
    counters = entry.get("stagio") or {}
    value, runs = counters.get(counter), entry.get("runs")
    return value / runs if value is not None and runs else None


def _legend(modes):
    return markdown.modes_legend(modes) + [
        "- T = the workload's own elapsed time (barrier to barrier), median of the successful "
        "runs; min and max are in results.json.",
        "- speed-up = T_plain / T_mode; bound = T_plain / max(T_ideal, T_transfer), the most a "
        "mode can gain: it can hide I/O behind compute but cannot move plain's bytes faster "
        "than the device's bandwidth (T_transfer = bytes plain moved / bandwidth; T_ideal alone "
        "when unknown); collective / individual = the ratio of the two stagio speed-ups.",
        "- requests = storage requests the emulator saw per run (median); mean request = bytes "
        "moved / data requests over all runs. Both count plain MPI-IO's and stagio's requests "
        "the same way, at the storage device.",
        "- prefetches, redundant (prefetch proposals dropped as duplicates between ranks, or "
        "already demanded, cached or in flight), exchanged (bytes sent to other ranks) and "
        "remote requests (block requests to aggregators): stagio's counters summed over ranks, "
        "mean per run; n/a when stagio does not report them.",
    ]
