"""What the plots share: a colour per mode, the same in every plot, and titles that name the
rank counts and the emulated device."""

from . import results_view

MODE_COLOURS = {"ideal": "#9e9e9e", "plain": "#d62728", "stagio": "#1f77b4",
                "stagio-prefetch": "#2ca02c", "stagio-individual": "#ff7f0e",
                "stagio-collective": "#9467bd", "stagio-off": "#1f77b4", "pp": "#ff7f0e",
                "ppis": "#2ca02c", "client": "#1f77b4", "iond": "#2ca02c"}
# Line plots: a marker per mode, so that modes with the same numbers stay visible on top of
# each other.
MODE_MARKERS = {"plain": "s", "stagio-individual": "o", "stagio-collective": "^",
                "ideal": "v", "stagio-off": "o", "pp": "D", "ppis": "^"}


def title(results, what):
    emulator = results.get("emulator", {})
    device = ", ".join(f"{_plain(emulator.get(key))} {unit}" for key, unit in
                       (("latency_ms", "ms"), ("bandwidth_mbps", "MB/s"), ("parallel", "parallel")))
    counts = results_view.rank_counts_of(results.get("settings", {}))
    ranks = ", ".join(map(str, counts)) if counts else "?"
    return f"{what}\n{ranks} ranks; emulated storage: {device}"


def save(pyplot, figure, path):
    """Writes the figure as a PNG and frees it; returns the path."""
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    pyplot.close(figure)
    return path


def _plain(value):
    return f"{value:g}" if isinstance(value, (int, float)) else "?"
