"""The report's plots, drawn with matplotlib's Agg backend (no display needed). Each function
takes pyplot, draws one figure into `out_dir` and returns the PNG's path."""

import os

from .. import plot_style

MIB = 2.0 ** 20
# What the plots share with the benchmarks' (plot_style): stagio blue, plain MPI-IO red.
IN_READS, IN_OTHER, OUTSIDE = "#1f77b4", "#aec7e8", "#dddddd"
USED, LATE, WASTED, MISSED = "#2ca02c", "#ff7f0e", "#d62728", "#9e9e9e"
PLOT_FILES = 6


def time_per_rank(pyplot, job, out_dir):
    """Each rank's run: time in MPI-IO reads, in its other MPI-IO calls, and outside them."""
    ranks = job.ranks
    figure, axes = pyplot.subplots(figsize=(8, 1.2 + 0.35 * max(1, len(ranks))))
    labels = [f"rank {r.rank}" for r in ranks]
    reads = [r.total.read_blocked_s for r in ranks]
    other = [max(0.0, r.total.blocked_s - r.total.read_blocked_s) for r in ranks]
    outside = [max(0.0, (r.run_s or 0) - r.total.blocked_s) for r in ranks]
    axes.barh(labels, reads, color=IN_READS, label="in MPI-IO reads")
    axes.barh(labels, other, left=reads, color=IN_OTHER, label="in other MPI-IO calls")
    axes.barh(labels, outside, left=[a + b for a, b in zip(reads, other)], color=OUTSIDE,
              label="outside MPI-IO (computing, communicating)")
    axes.invert_yaxis()
    axes.set_xlabel("seconds")
    axes.set_title("Where each rank's time went")
    axes.legend(loc="lower right", fontsize="small")
    return plot_style.save(pyplot, figure, os.path.join(out_dir, "time.png"))


def bytes_moved(pyplot, job, out_dir):
    """What the program moved against what stagio moved to and from storage."""
    total = job.total
    bars = (("read by\nthe program", total.read_bytes, IN_READS),
            ("read from\nstorage", total.get("storage_read_bytes"), IN_OTHER),
            ("written by\nthe program", total.write_bytes, IN_READS),
            ("written back\nto storage", total.get("dirty_bytes_flushed"), IN_OTHER),
            ("direct path", total.get("direct_bytes"), OUTSIDE),
            ("exchanged\nbetween ranks", total.get("exchanged_bytes"), OUTSIDE))
    figure, axes = pyplot.subplots(figsize=(8, 3.6))
    axes.bar([b[0] for b in bars], [b[1] / MIB for b in bars], color=[b[2] for b in bars])
    axes.set_ylabel("MiB")
    axes.set_title("Bytes the program moved, and what reached storage")
    axes.tick_params(axis="x", labelsize="small")
    return plot_style.save(pyplot, figure, os.path.join(out_dir, "bytes.png"))


def prefetch_outcomes(pyplot, job, out_dir):
    """For the job and its busiest files: prefetched blocks used in time, used late, wasted,
    and the reads that missed and fetched for themselves."""
    rows = [("job", job.total)] + [(os.path.basename(name) or name, record)
                                   for name, record in job.busiest_files(PLOT_FILES)]
    labels = [label for label, _ in rows]
    in_time = [max(0, r.get("prefetch_used") - r.get("prefetch_late")) for _, r in rows]
    late = [r.get("prefetch_late") for _, r in rows]
    wasted = [r.get("prefetch_wasted") for _, r in rows]
    missed = [r.get("demand_fetches") for _, r in rows]
    figure, axes = pyplot.subplots(figsize=(8, 1.2 + 0.4 * len(rows)))
    left = [0] * len(rows)
    for values, colour, label in ((in_time, USED, "prefetched, used in time"),
                                  (late, LATE, "prefetched, used late"),
                                  (wasted, WASTED, "prefetched, never used"),
                                  (missed, MISSED, "fetched by a read that missed")):
        axes.barh(labels, values, left=left, color=colour, label=label)
        left = [a + b for a, b in zip(left, values)]
    axes.invert_yaxis()
    axes.set_xlabel("blocks (storage reads)")
    axes.set_title("Prefetching: what came ahead of the reads")
    axes.legend(loc="lower right", fontsize="small")
    return plot_style.save(pyplot, figure, os.path.join(out_dir, "prefetch.png"))


def comparison(pyplot, first, second, out_dir):
    """Two runs' times side by side."""
    measures = (("run time\n(slowest rank)", lambda j: j.run_s or 0),
                ("in MPI-IO calls\n(summed over ranks)", lambda j: j.total.blocked_s),
                ("in reads", lambda j: j.total.read_blocked_s))
    figure, axes = pyplot.subplots(figsize=(8, 3.6))
    positions = range(len(measures))
    width = 0.38
    for offset, job, label, colour in ((-width / 2, first, "A", "#d62728"),
                                       (width / 2, second, "B", "#1f77b4")):
        axes.bar([p + offset for p in positions], [value(job) for _, value in measures], width,
                 label=f"{label}: {os.path.basename(job.path)}", color=colour)
    axes.set_xticks(list(positions), [name for name, _ in measures])
    axes.set_ylabel("seconds")
    axes.set_title("A against B")
    axes.legend(fontsize="small")
    return plot_style.save(pyplot, figure, os.path.join(out_dir, "compare.png"))
