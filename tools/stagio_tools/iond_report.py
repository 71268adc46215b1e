"""results.md of the iond suite: for each workload and rank count, every mode's time, I/O time
and I/O throughput against plain MPI-IO's, the storage requests, the daemon's shutdown; and the
verdicts on issue 6's targets. Rendered from the results dictionary alone, like report.py.
"""

from . import iond_targets
from . import markdown
from . import scaling_report
from . import summary as summary_table
from .markdown import fmt_count, fmt_ratio, fmt_seconds


def render_markdown(results):
    def evaluate(summary, workloads, rank_counts):
        return iond_targets.evaluate(summary, workloads, rank_counts, results.get("link"),
                                     results.get("emulator"))
    return scaling_report.document(results, "the I/O-node daemon", 6, evaluate,
                                   _workload_tables, _legend)


def fmt_rate(value):
    return markdown.NA if value is None else f"{value:.1f}"


def _workload_tables(summary, workload, counts, modes):
    ran = [r for w, r in iond_targets.cases(summary, [workload], counts)]
    header = ["ranks", "mode", "T (s)", "I/O (s)", "throughput (MB/s)", "x plain",
              "storage requests", "daemon shutdown (s)", "app's direct requests"]
    rows = []
    for ranks in ran:
        for mode in modes:
            entry = summary_table.entry(summary, workload, ranks, mode)
            rows.append([str(ranks), mode, scaling_report.time_cell(entry),
                         fmt_seconds(entry.get("io_median_s")),
                         fmt_rate(entry.get("throughput_mbps")),
                         fmt_ratio(iond_targets.throughput_gain(summary, workload, ranks, mode,
                                                                iond_targets.PLAIN)),
                         fmt_count(entry.get("emulator_requests")),
                         fmt_seconds(entry.get("iond_shutdown_s")),
                         fmt_count(entry.get("app_direct_requests"))])
    return markdown.table(header, rows)


def _legend(modes):
    return markdown.modes_legend(modes) + [
        "- T = the workload's own elapsed time (barrier to barrier, close included), median of "
        "the successful runs. I/O = the time the slowest rank spent in MPI-IO calls (open, "
        "writes or reads, close), median.",
        "- throughput = bytes written or read / I/O time, median over the runs (seed 004's "
        "measure, close included); x plain = the mode's throughput over plain MPI-IO's.",
        "- Every mode crosses the same emulated link (see the header): plain and client in "
        "stagio-emu's link stage, in series with the device; iond through stagio-link to the "
        "daemon, which runs under stagio-emu with the device alone.",
        "- storage requests = requests the emulated device saw per run (median): the "
        "application's in plain and client, the daemon's in iond, including the untimed "
        "--verify-output reads of the write workloads.",
        "- daemon shutdown = from SIGTERM to the daemon's exit after the run, flushing what it "
        "held dirty: not part of T (close flushes every tier before it returns), noted to show "
        "what was left. app's direct requests = storage requests the ranks made themselves in "
        "the iond mode (charged on their own emulated device, with the link): should be 0.",
    ]
