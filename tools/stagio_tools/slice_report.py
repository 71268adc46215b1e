"""results.md of the preexec-slice suite: each pre-execution example with the helper
stagio-slice generated beside the one written by hand, plain MPI-IO and PPIS, against the rank
count, and the verdict on issue 17's timing target: the generated helper's run time within 5%
of the hand-written one's (T_ppis(generated) <= 1.05 T_ppis(hand), medians) in every case.
Rendered from the results dictionary alone, like report.py.
"""

from . import markdown
from . import metrics
from . import scaling_report
from . import summary as summary_table
from . import verdicts
from . import workloads as table

PLAIN, PPIS = "plain", "ppis"
WITHIN = 0.05


def render_markdown(results):
    return scaling_report.document(results, "generated pre-execution helpers", 17, evaluate,
                                   _workload_tables, _legend)


def _hand(workload):
    """The hand-written workload a generated one stands beside, or None."""
    if workload.endswith(table.SLICED_SUFFIX):
        return workload[:-len(table.SLICED_SUFFIX)]
    return None


def _median(summary, workload, ranks, mode):
    return summary_table.entry(summary, workload, ranks, mode).get("median_s")


def ratios(summary, workloads, rank_counts):
    """(generated / hand PPIS time, workload, ranks) for every case with both measured."""
    cases = []
    for workload in workloads:
        hand = _hand(workload)
        if hand is None:
            continue
        for ranks in rank_counts:
            ratio = metrics.ratio(_median(summary, workload, ranks, PPIS),
                                  _median(summary, hand, ranks, PPIS))
            if ratio is not None:
                cases.append((ratio, workload, ranks))
    return cases


def evaluate(summary, workloads, rank_counts):
    target = (f"the generated helper's run time within {100 * WITHIN:.0f}% of the hand-written "
              "slice's (PPIS, every example and rank count)")
    cases = [(f"{workload} at {ranks}: {ratio:.3f}", ratio <= 1.0 + WITHIN)
             for ratio, workload, ranks in ratios(summary, workloads, rank_counts)]
    return [verdicts.every_case(target, cases, "no generated and hand-written pair measured",
                                prefix="T_ppis generated / hand: ")]


def _workload_tables(summary, workload, counts, modes):
    hand = _hand(workload)
    header = ["ranks"] + [f"T {m}" for m in modes]
    if hand is not None:
        header.append("T ppis / hand-written's")
    rows = []
    for ranks in counts:
        row = [str(ranks)]
        row += [scaling_report.time_cell(summary_table.entry(summary, workload, ranks, m))
                for m in modes]
        if hand is not None:
            ratio = metrics.ratio(_median(summary, workload, ranks, PPIS),
                                  _median(summary, hand, ranks, PPIS))
            row.append("" if ratio is None else f"{ratio:.3f}")
        rows.append(row)
    return ["Time (s, median):", ""] + markdown.table(header, rows)


def _legend(modes):
    return markdown.modes_legend(modes) + [
        "- T = the workload's own elapsed time (barrier to barrier), median of the successful "
        "runs; min and max are in results.json.",
        f"- A workload ending in {table.SLICED_SUFFIX} runs the program built from the "
        "example's source without its slice, with the helper stagio-slice generated; the "
        "other runs the example with its hand-written slice.",
    ]
