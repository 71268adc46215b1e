"""times.png and overlap.png, drawn with matplotlib's Agg backend (no display needed).

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

from . import modes as mode_table

SYSTEM_PYTHON = "/usr/bin/python3"

# One colour per mode, the same in both plots.
MODE_COLOURS = {"ideal": "#9e9e9e", "plain": "#d62728", "stagio": "#1f77b4",
                "stagio-prefetch": "#2ca02c"}


def write_plots(results, results_path, out_dir):
    """Draws both plots into out_dir. Returns (paths written, warning or None); never raises
    for a missing matplotlib, since the numbers are in results.md and results.json anyway."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        return _plot_with_system_python(results_path, out_dir)
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
    settings = results.get("settings", {})
    summary = results.get("summary", {})
    return settings.get("workloads", list(summary)), settings.get("modes", []), summary


def _value(summary, workload, mode, key):
    return summary.get(workload, {}).get(mode, {}).get(key)


def _grouped_axes(pyplot, workloads, groups):
    figure, axes = pyplot.subplots(figsize=(max(8.0, 1.1 * len(workloads) + 2), 4.8))
    width = 0.8 / max(1, groups)
    return figure, axes, width


def _positions(workloads, index, groups, width):
    """x of bar `index` of `groups` in each workload's group, the group centred on the tick."""
    return [w + (index - (groups - 1) / 2) * width for w in range(len(workloads))]


def _bars(axes, positions, values, width, mode, errors=None):
    """One mode's bars. A missing value gets an "n/a" label at the base instead of a bar (NaN
    heights would upset matplotlib's limits)."""
    heights = [0.0 if v is None else v for v in values]
    axes.bar(positions, heights, width, label=mode, color=MODE_COLOURS.get(mode), yerr=errors,
             capsize=2, error_kw={"elinewidth": 0.8})
    for position, value in zip(positions, values):
        if value is None:
            axes.text(position, 0, "n/a", ha="center", va="bottom", fontsize="x-small")


def _save(pyplot, figure, axes, workloads, path):
    axes.set_xticks(range(len(workloads)))
    axes.set_xticklabels(workloads, rotation=30, ha="right")
    axes.legend(fontsize="small")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    pyplot.close(figure)
    return path


def _times_plot(pyplot, results, out_dir):
    workloads, modes, summary = _layout(results)
    figure, axes, width = _grouped_axes(pyplot, workloads, len(modes))
    for index, mode in enumerate(modes):
        spans = [[_value(summary, w, mode, k) for k in ("median_s", "min_s", "max_s")]
                 for w in workloads]
        below = [0.0 if None in s else s[0] - s[1] for s in spans]
        above = [0.0 if None in s else s[2] - s[0] for s in spans]
        _bars(axes, _positions(workloads, index, len(modes), width), [s[0] for s in spans],
              width, mode, errors=[below, above])
    axes.set_ylabel("elapsed time (s), median, whiskers min-max")
    axes.set_title(_title(results, "Time per workload and mode"))
    return _save(pyplot, figure, axes, workloads, os.path.join(out_dir, "times.png"))


def _overlap_plot(pyplot, results, out_dir):
    workloads, modes, summary = _layout(results)
    shown = [m for m in modes if mode_table.is_compared(m)]
    figure, axes, width = _grouped_axes(pyplot, workloads, len(shown))
    for index, mode in enumerate(shown):
        values = [_value(summary, w, mode, "overlap_efficiency") for w in workloads]
        _bars(axes, _positions(workloads, index, len(shown), width),
              [None if v is None else 100.0 * v for v in values], width, mode)
    axes.axhline(0, color="black", linewidth=0.8)
    axes.axhline(100, color="black", linewidth=0.8, linestyle="--")
    axes.set_ylabel("overlap efficiency (%)\n(T_plain - T_mode) / (T_plain - T_ideal)")
    axes.set_title(_title(results, "I/O time hidden"))
    return _save(pyplot, figure, axes, workloads, os.path.join(out_dir, "overlap.png"))


def _title(results, what):
    settings = results.get("settings", {})
    emulator = results.get("emulator", {})
    device = ", ".join(f"{_plain(emulator.get(key))} {unit}" for key, unit in
                       (("latency_ms", "ms"), ("bandwidth_mbps", "MB/s"), ("parallel", "parallel")))
    return f"{what}\n{settings.get('ranks', '?')} ranks; emulated storage: {device}"


def _plain(value):
    return f"{value:g}" if isinstance(value, (int, float)) else "?"


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
