"""The plots of a scaling suite: speedup.png (each stagio mode's speed-up over plain MPI-IO
against the rank count, one panel per workload, with the bound of hiding all I/O) and
requests.png (storage requests per run against the rank count). pyplot comes from plots.py,
which owns the matplotlib import and its fallback. The helpers (a panel per workload, the rank
axis) serve preexec_plots.py too."""

import math
import os

from . import modes as mode_table
from . import results_view
from . import summary as summary_table
from . import plot_style
from .plot_style import MODE_COLOURS, MODE_MARKERS, title

PLOT_NAMES = ("speedup.png", "requests.png")


def draw(pyplot, results, out_dir):
    """Draws both plots; returns their paths."""
    return [_speedup_plot(pyplot, results, os.path.join(out_dir, "speedup.png")),
            _requests_plot(pyplot, results, os.path.join(out_dir, "requests.png"))]


def layout(results):
    shown = results_view.view(results)
    return shown.workloads, shown.rank_counts, shown.modes, shown.summary


def series(summary, workload, counts, mode, key):
    """The values of `key` at each rank count; NaN where missing, which leaves a gap."""
    values = [summary_table.entry(summary, workload, r, mode).get(key) for r in counts]
    return [math.nan if v is None else v for v in values]


def panels(pyplot, workloads):
    columns = min(2, max(1, len(workloads)))
    rows = math.ceil(max(1, len(workloads)) / columns)
    figure, axes = pyplot.subplots(rows, columns, figsize=(5.5 * columns, 3.8 * rows),
                                   squeeze=False)
    flat = [a for row in axes for a in row]
    for unused in flat[len(workloads):]:
        unused.set_visible(False)
    return figure, flat


def rank_axis(axes, counts):
    if len(counts) > 1:
        axes.set_xscale("log", base=2)
    axes.set_xticks(counts)
    axes.set_xticklabels([str(c) for c in counts])
    axes.set_xlabel("ranks")
    axes.grid(alpha=0.3)


def finish(pyplot, figure, results, what, path):
    figure.suptitle(title(results, what))
    return plot_style.save(pyplot, figure, path)


def _speedup_plot(pyplot, results, path):
    workloads, counts, modes, summary = layout(results)
    figure, panel_axes = panels(pyplot, workloads)
    for axes, workload in zip(panel_axes, workloads):
        for mode in (m for m in modes if mode_table.is_compared(m)):
            axes.plot(counts, series(summary, workload, counts, mode, "speedup"),
                      marker=MODE_MARKERS.get(mode, "o"), label=mode,
                      color=MODE_COLOURS.get(mode))
        if mode_table.BASELINE in modes:
            axes.plot(counts, series(summary, workload, counts, mode_table.BASELINE,
                                      "speedup_bound"),
                      linestyle="--", color=MODE_COLOURS[mode_table.BOUND],
                      label="bound: all I/O hidden")
        axes.axhline(1.0, color=MODE_COLOURS[mode_table.BASELINE], linewidth=0.8,
                     label="plain")
        rank_axis(axes, counts)
        axes.set_ylabel("speed-up over plain")
        axes.set_title(workload, fontsize="medium")
        axes.legend(fontsize="x-small")
    return finish(pyplot, figure, results, "Speed-up over plain MPI-IO (T_plain / T_mode)",
                   path)


def _requests_plot(pyplot, results, path):
    workloads, counts, modes, summary = layout(results)
    figure, panel_axes = panels(pyplot, workloads)
    for axes, workload in zip(panel_axes, workloads):
        for mode in (m for m in modes if m != mode_table.BOUND):
            axes.plot(counts, series(summary, workload, counts, mode, "emulator_requests"),
                      marker=MODE_MARKERS.get(mode, "o"), markersize=9 if mode == "plain" else 6,
                      label=mode, color=MODE_COLOURS.get(mode))
        rank_axis(axes, counts)
        if any(v > 0 for line in axes.get_lines() for v in line.get_ydata()):
            axes.set_yscale("log")  # requests differ by orders of magnitude between modes
        axes.set_ylabel("storage requests per run")
        axes.set_title(workload, fontsize="medium")
        axes.legend(fontsize="x-small")
    return finish(pyplot, figure, results, "Storage requests seen by the emulator", path)
