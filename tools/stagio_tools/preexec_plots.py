"""The plots of the pre-execution suite, against the rank count with a panel per workload:
time.png (every mode's median time, the optimum among them) and bound.png (the share of the
bound each stagio mode reached, with the issue's 80% line). pyplot comes from plots.py."""

import os

from . import modes as mode_table
from . import preexec_targets
from .plot_style import MODE_COLOURS, MODE_MARKERS
from .scaling_plots import finish, layout, panels, rank_axis, series

PLOT_NAMES = ("time.png", "bound.png")


def draw(pyplot, results, out_dir):
    """Draws both plots; returns their paths."""
    return [_lines(pyplot, results, os.path.join(out_dir, "time.png"), all_modes=True),
            _lines(pyplot, results, os.path.join(out_dir, "bound.png"), all_modes=False)]


def _lines(pyplot, results, path, all_modes):
    """time.png (all_modes: median_s of every mode) or bound.png (the share of the bound of
    the stagio modes)."""
    workloads, counts, modes, summary = layout(results)
    shown = modes if all_modes else [m for m in modes if mode_table.is_compared(m)]
    key = "median_s" if all_modes else "overlap_efficiency"
    figure, axes_list = panels(pyplot, workloads)
    for axes, workload in zip(axes_list, workloads):
        for mode in shown:
            axes.plot(counts, series(summary, workload, counts, mode, key),
                      marker=MODE_MARKERS.get(mode, "o"), label=mode,
                      color=MODE_COLOURS.get(mode))
        if not all_modes:
            axes.axhline(1.0, color=MODE_COLOURS[mode_table.BOUND], linestyle="--",
                         linewidth=0.8, label="optimum")
            axes.axhline(preexec_targets.BOUND_SHARE, color="black", linestyle=":",
                         linewidth=0.8, label="target (80%)")
            axes.axhline(0.0, color=MODE_COLOURS[mode_table.BASELINE], linewidth=0.8,
                         label="plain")
        rank_axis(axes, counts)
        axes.set_ylabel("elapsed time (s), median" if all_modes else
                        "share of the bound\n(T_plain - T_mode) / (T_plain - T_ideal)")
        axes.set_title(_panel_title(results, workload), fontsize="medium")
        axes.legend(fontsize="x-small")
    what = "Time against the rank count" if all_modes else \
        "Share of the bound reached (1 = as fast as the optimum)"
    return finish(pyplot, figure, results, what, path)


def _panel_title(results, workload):
    """The workload's name, and its device when it has its own (the figure's title names the
    run's)."""
    device = results.get("workloads", {}).get(workload, {}).get("device")
    if not device:
        return workload
    return (f"{workload}\n(own device: {device.get('bandwidth_mbps'):g} MB/s, "
            f"{device.get('parallel')} parallel)")
