"""The plots, drawn with matplotlib's Agg backend (no display needed): times.png and
overlap.png for a per-mode suite, speedup.png and requests.png for a scaling one
(scaling_plots.py), time.png and bound.png for the pre-execution one (preexec_plots.py).

matplotlib is the only third-party module the tools use, and only here, imported late: the
harness and its tests run without it. Debian's python3-matplotlib belongs to /usr/bin/python3;
when the interpreter running the harness is another one (a pyenv or venv python3 found first on
PATH) and cannot import it, the plots are drawn by /usr/bin/python3 running this module:
    python3 -m stagio_tools.plots RESULTS_JSON OUT_DIR
"""

import json
import os
import subprocess
import sys

from . import iond_plots
from . import modes as mode_table
from . import preexec_plots
from . import results_view
from . import scaling_plots
from . import suites
from . import summary as summary_table
from . import plot_style
from .plot_style import MODE_COLOURS, title

SYSTEM_PYTHON = "/usr/bin/python3"

PER_MODE_PLOTS = ("times.png", "overlap.png")
# Every file a run may draw, so that a new run can clear what an older one left.
PLOT_NAMES = PER_MODE_PLOTS + scaling_plots.PLOT_NAMES + preexec_plots.PLOT_NAMES + \
    iond_plots.PLOT_NAMES


def write_plots(results, results_path, out_dir):
    """Draws both plots into out_dir. Returns (paths written, warning or None); never raises
    for a missing matplotlib, since the numbers are in results.md and results.json anyway."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        return _plot_with_system_python(results_path, out_dir)
    kind = suites.suite_of(results).report
    if kind == suites.SCALING:
        return scaling_plots.draw(pyplot, results, out_dir), None
    if kind == suites.PREEXEC:
        return preexec_plots.draw(pyplot, results, out_dir), None
    if kind == suites.IOND:
        return iond_plots.draw_suite(pyplot, results, out_dir), None
    if kind == suites.IOND_SWEEP:
        return iond_plots.draw_sweep(pyplot, results, out_dir), None
    if kind == suites.SEGSTORE:
        return iond_plots.draw_suite(pyplot, results, out_dir), None
    return [_times_plot(pyplot, results, out_dir), _overlap_plot(pyplot, results, out_dir)], None


def _plot_with_system_python(results_path, out_dir):
    why = f"matplotlib cannot be imported by {sys.executable}"
    if os.path.realpath(sys.executable) == os.path.realpath(SYSTEM_PYTHON) or \
            not os.access(SYSTEM_PYTHON, os.X_OK):
        return [], f"{why}; install python3-matplotlib; plots skipped"
    tools_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=tools_dir)
    done = subprocess.run([SYSTEM_PYTHON, "-m", "stagio_tools.plots", str(results_path),
                           str(out_dir)], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["?"]
        return [], f"{why}, nor by {SYSTEM_PYTHON} ({tail[0]}); plots skipped"
    return done.stdout.split(), None


def _layout(results):
    """(cases, modes, summary); a case is (label, workload, ranks): the workload's name, with
    its rank count when the run had several."""
    shown = results_view.view(results)
    several = len(shown.rank_counts) > 1
    cases = [(f"{w} ({r})" if several else w, w, r)
             for r in shown.rank_counts for w in shown.workloads]
    return cases, shown.modes, shown.summary


def _value(summary, case, mode, key):
    _, workload, ranks = case
    return summary_table.entry(summary, workload, ranks, mode).get(key)


def _grouped_axes(pyplot, cases, groups):
    figure, axes = pyplot.subplots(figsize=(max(8.0, 1.1 * len(cases) + 2), 4.8))
    width = 0.8 / max(1, groups)
    return figure, axes, width


def _positions(cases, index, groups, width):
    """x of bar `index` of `groups` in each case's group, the group centred on the tick."""
    return [c + (index - (groups - 1) / 2) * width for c in range(len(cases))]


def _bars(axes, positions, values, width, mode, errors=None):
    """One mode's bars. A missing value gets an "n/a" label at the base instead of a bar (NaN
    heights would upset matplotlib's limits)."""
    heights = [0.0 if v is None else v for v in values]
    axes.bar(positions, heights, width, label=mode, color=MODE_COLOURS.get(mode), yerr=errors,
             capsize=2, error_kw={"elinewidth": 0.8})
    for position, value in zip(positions, values):
        if value is None:
            axes.text(position, 0, "n/a", ha="center", va="bottom", fontsize="x-small")


def _save(pyplot, figure, axes, cases, path):
    axes.set_xticks(range(len(cases)))
    axes.set_xticklabels([label for label, _, _ in cases], rotation=30, ha="right")
    axes.legend(fontsize="small")
    axes.grid(axis="y", alpha=0.3)
    return plot_style.save(pyplot, figure, path)


def _times_plot(pyplot, results, out_dir):
    cases, modes, summary = _layout(results)
    figure, axes, width = _grouped_axes(pyplot, cases, len(modes))
    for index, mode in enumerate(modes):
        spans = [[_value(summary, c, mode, k) for k in ("median_s", "min_s", "max_s")]
                 for c in cases]
        below = [0.0 if None in s else s[0] - s[1] for s in spans]
        above = [0.0 if None in s else s[2] - s[0] for s in spans]
        _bars(axes, _positions(cases, index, len(modes), width), [s[0] for s in spans],
              width, mode, errors=[below, above])
    axes.set_ylabel("elapsed time (s), median, whiskers min-max")
    axes.set_title(title(results, "Time per workload and mode"))
    return _save(pyplot, figure, axes, cases, os.path.join(out_dir, "times.png"))


def _overlap_plot(pyplot, results, out_dir):
    cases, modes, summary = _layout(results)
    shown = [m for m in modes if mode_table.is_compared(m)]
    figure, axes, width = _grouped_axes(pyplot, cases, len(shown))
    for index, mode in enumerate(shown):
        values = [_value(summary, c, mode, "overlap_efficiency") for c in cases]
        _bars(axes, _positions(cases, index, len(shown), width),
              [None if v is None else 100.0 * v for v in values], width, mode)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.axhline(100, color="black", linewidth=0.8, linestyle="--")
    axes.set_ylabel("overlap efficiency (%)\n(T_plain - T_mode) / (T_plain - T_ideal)")
    axes.set_title(title(results, "I/O time hidden"))
    return _save(pyplot, figure, axes, cases, os.path.join(out_dir, "overlap.png"))


def main(argv):
    """python3 -m stagio_tools.plots RESULTS_JSON OUT_DIR: prints the paths written."""
    if len(argv) != 2:
        print("usage: python3 -m stagio_tools.plots RESULTS_JSON OUT_DIR", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as stream:
        results = json.load(stream)
    paths, warning = write_plots(results, argv[0], argv[1])
    if warning:
        print(warning, file=sys.stderr)
        return 1
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
