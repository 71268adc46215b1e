"""results.md of the iond-sweep suite: SimParIO's write throughput (close included) over the
client's and the daemon's high water marks (seed 004 Fig. 6) and cache sizes (Fig. 9), as two
grids, with plain MPI-IO and the client tier alone for reference."""

from . import iond_modes
from . import markdown
from . import results_view
from . import summary as summary_table
from .iond_report import fmt_rate

# (kind, title, what the rows are, what the columns are, their values, the fixed settings)
GRIDS = (
    (iond_modes.MARKS, "Water marks (seed 004 Fig. 6)", "client high mark",
     "daemon high mark", iond_modes.CLIENT_MARKS, iond_modes.DAEMON_MARKS,
     f"client caches {iond_modes.CLIENT_CACHE}, daemon cache {iond_modes.DAEMON_CACHE}; each "
     "low mark half its high mark"),
    (iond_modes.CACHES, "Cache sizes (seed 004 Fig. 9)", "client cache", "daemon cache",
     iond_modes.CLIENT_CACHES, iond_modes.DAEMON_CACHES,
     f"client high mark {iond_modes.CACHE_SWEEP_MARKS[0]}%, daemon high mark "
     f"{iond_modes.CACHE_SWEEP_MARKS[1]}%"),
)


def point_mode(kind, client, daemon):
    """The name of the mode that runs one sweep point."""
    return next(p.mode for p in iond_modes.SWEEP_POINTS
                if (p.kind, p.client, p.daemon) == (kind, client, daemon))


def unit(kind, value):
    return f"{value:g}%" if kind == iond_modes.MARKS else value


def render_markdown(results):
    shown = results_view.view(results)
    lines = ["# stagio bench results: client and daemon settings (iond-sweep)", ""]
    lines += markdown.header(results)
    for workload in shown.workloads:
        for ranks in shown.rank_counts:
            lines += ["", f"## {workload} at {ranks} ranks", ""]
            lines += markdown.workload_description(results, workload)
            lines += _references(shown.summary, workload, ranks, shown.modes)
            for grid in GRIDS:
                lines += _grid(shown.summary, workload, ranks, shown.modes, grid)
    lines += markdown.failures_section(results)
    lines += ["", "## Legend", "",
              "- Each cell: the write throughput in MB/s, bytes written / the slowest rank's "
              "time in MPI-IO calls (open, writes and close: close flushes every tier), median "
              "over the reps; n/a where the point was not run or failed.",
              "- Every point runs the iond mode (a stagio-iond per run behind stagio-link) with "
              "STAGIO_WB_QUIET=0, so that the water marks alone decide when to write back.",
              "- A client cache of 0: no caching (only what a call is using); the daemon's "
              "smallest, 1M, is one block (it refuses 0). A high mark of 0: write back at once."]
    return "\n".join(lines) + "\n"


def _references(summary, workload, ranks, modes):
    lines = []
    for mode in ("plain", "client"):
        if mode in modes:
            entry = summary_table.entry(summary, workload, ranks, mode)
            lines.append(f"- `{mode}`: {fmt_rate(entry.get('throughput_mbps'))} MB/s")
    return lines + ([""] if lines else [])


def _grid(summary, workload, ranks, modes, grid):
    kind, title, rows_are, columns_are, row_values, column_values, fixed = grid
    if not any(iond_modes.sweep_point(m) and iond_modes.sweep_point(m).kind == kind
               for m in modes):
        return []
    header = [f"{rows_are} \\ {columns_are}"] + [unit(kind, c) for c in column_values]
    rows = []
    for client in row_values:
        row = [unit(kind, client)]
        for daemon in column_values:
            entry = summary_table.entry(summary, workload, ranks, point_mode(kind, client, daemon))
            row.append(fmt_rate(entry.get("throughput_mbps")))
        rows.append(row)
    return [f"### {title}", "", f"Write throughput, MB/s ({fixed}):", ""] + \
        markdown.table(header, rows) + [""]
