"""The plots of the iond suites. iond: throughput.png, each mode's I/O throughput per case
(workload at a rank count), bars on a log scale. iond-sweep: sweep_marks.png (throughput
against the client's high water mark, one line per daemon mark: seed 004 Fig. 6) and
sweep_caches.png (against the client's cache size, one line per daemon cache: Fig. 9). pyplot
comes from plots.py."""

import math
import os

from . import iond_sweep_report
from . import iond_targets
from . import results_view
from . import summary as summary_table
from .plot_style import MODE_COLOURS, save, title

SUITE_PLOTS = ("throughput.png",)
SWEEP_PLOTS = ("sweep_marks.png", "sweep_caches.png")
PLOT_NAMES = SUITE_PLOTS + SWEEP_PLOTS


def draw_suite(pyplot, results, out_dir):
    shown = results_view.view(results)
    cases = iond_targets.cases(shown.summary, shown.workloads, shown.rank_counts)
    figure, axes = pyplot.subplots(figsize=(max(8.0, 1.6 * len(cases) + 2), 4.8))
    width = 0.8 / max(1, len(shown.modes))
    for index, mode in enumerate(shown.modes):
        values = [summary_table.entry(shown.summary, w, r, mode).get("throughput_mbps")
                  for w, r in cases]
        positions = [c + (index - (len(shown.modes) - 1) / 2) * width for c in range(len(cases))]
        axes.bar(positions, [v or 0.0 for v in values], width, label=mode,
                 color=MODE_COLOURS.get(mode))
    axes.set_yscale("log")
    axes.set_xticks(range(len(cases)))
    axes.set_xticklabels([f"{w} ({r})" for w, r in cases], rotation=20, ha="right")
    axes.set_ylabel("I/O throughput (MB/s), close included")
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize="small")
    link = results.get("link")
    crossing = (f"; link {link.get('latency_ms', '?')} ms, {link.get('bandwidth_mbps', '?')} MB/s"
                if link else "")
    axes.set_title(title(results, "I/O throughput per workload (ranks) and mode" + crossing))
    return [save(pyplot, figure, os.path.join(out_dir, "throughput.png"))]


def draw_sweep(pyplot, results, out_dir):
    shown = results_view.view(results)
    paths = []
    for grid, name in zip(iond_sweep_report.GRIDS, SWEEP_PLOTS):
        paths.append(_sweep_plot(pyplot, results, shown, grid, os.path.join(out_dir, name)))
    return paths


def _sweep_plot(pyplot, results, shown, grid, path):
    kind, heading, rows_are, columns_are, row_values, column_values, fixed = grid
    figure, panels = pyplot.subplots(1, max(1, len(shown.workloads)), squeeze=False,
                                     figsize=(6.5 * max(1, len(shown.workloads)), 4.5))
    ranks = shown.rank_counts[0] if shown.rank_counts else 4
    for axes, workload in zip(panels[0], shown.workloads):
        positions = range(len(row_values))
        for daemon in column_values:
            values = []
            for client in row_values:
                mode = iond_sweep_report.point_mode(kind, client, daemon)
                value = summary_table.entry(shown.summary, workload, ranks, mode).get(
                    "throughput_mbps") if mode in shown.modes else None
                values.append(math.nan if value is None else value)
            axes.plot(positions, values, marker="o",
                      label=f"{columns_are} {iond_sweep_report.unit(kind, daemon)}")
        for mode, style in (("plain", ":"), ("client", "--")):
            value = summary_table.entry(shown.summary, workload, ranks, mode).get(
                "throughput_mbps")
            if value is not None:
                axes.axhline(value, linestyle=style, color=MODE_COLOURS.get(mode), label=mode)
        axes.set_xticks(list(positions))
        axes.set_xticklabels([str(iond_sweep_report.unit(kind, c)) for c in row_values])
        axes.set_xlabel(rows_are)
        axes.set_ylabel("write throughput (MB/s), close included")
        axes.set_title(f"{workload}, {ranks} ranks\n({fixed})", fontsize="small")
        axes.grid(alpha=0.3)
        axes.legend(fontsize="x-small")
    figure.suptitle(title(results, heading))
    return save(pyplot, figure, path)
