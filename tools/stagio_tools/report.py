"""results.md: the benchmark results as Markdown, rendered from the results dictionary alone.

Everything shown comes from the dictionary that is also saved as results.json, so a report can
be re-rendered later from the JSON (and tested from a fixed dictionary).
"""

from . import modes as mode_table

NA = "n/a"


def fmt_seconds(value):
    return NA if value is None else f"{value:.3f}"


def fmt_ratio(value):
    return NA if value is None else f"{value:.2f}"


def fmt_percent(value):
    return NA if value is None else f"{100.0 * value:.0f}%"


def fmt_count(value):
    if value is None:
        return NA
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _entry(summary, workload, mode):
    return summary.get(workload, {}).get(mode, {})


def render_markdown(results):
    """The whole results.md text."""
    settings = results.get("settings", {})
    modes = settings.get("modes", [])
    summary = results.get("summary", {})
    workloads = settings.get("workloads", list(summary))
    lines = ["# stagio bench results", ""]
    lines += _header(results)
    lines += ["", "## Overview", ""]
    lines += _overview(summary, workloads, modes)
    for workload in workloads:
        lines += ["", f"## {workload}", ""]
        lines += _workload_section(results, workload, modes)
    failures = results.get("failures", [])
    if failures:
        lines += ["", "## Failed runs", ""]
        for failure in failures:
            lines.append(f"- {failure['workload']} {failure['mode']} rep {failure['rep']}: "
                         f"{failure['error']}")
    lines += ["", "## Legend", ""]
    lines += _legend(settings)
    return "\n".join(lines) + "\n"


def _header(results):
    settings = results.get("settings", {})
    machine = results.get("machine", {})
    emulator = results.get("emulator", {})
    reps = settings.get("reps")
    lines = ["Produced by:", "", "```sh", results.get("command_line", "?"), "```", ""]
    lines.append(f"- When: {results.get('started_at', '?')}, "
                 f"{results.get('duration_s', 0.0):.0f} s in all"
                 + (" (quick mode)" if settings.get("quick") else ""))
    lines.append(f"- Machine: {machine.get('hostname', '?')}, {machine.get('nproc', '?')} cores, "
                 f"{machine.get('mpi_version') or settings.get('mpi', '?')}")
    git = results.get("git") or {}
    if git.get("commit"):
        lines.append(f"- stagio: {git['commit'][:12]}" + (" (with local changes)"
                                                          if git.get("dirty") else ""))
    lines.append(f"- Runs: {settings.get('ranks', '?')} ranks, {reps} "
                 f"rep{'' if reps == 1 else 's'} per workload and mode, modes interleaved"
                 + (", busy compute" if settings.get("busy") else ", compute phases sleep"))
    lines.append(f"- Emulated storage: {emulator.get('latency_ms', '?')} ms per request, "
                 f"{emulator.get('bandwidth_mbps', '?')} MB/s shared, "
                 f"{emulator.get('parallel', '?')} requests in parallel")
    return lines


def _overview(summary, workloads, modes):
    stagio_modes = [m for m in modes if mode_table.is_compared(m)]
    header = ["workload"] + [f"T_{m} (s)" for m in modes]
    header += [f"{m}/{mode_table.BASELINE}" for m in stagio_modes]
    header += [f"overlap {m}" for m in stagio_modes]
    rows = []
    for workload in workloads:
        row = [workload] + [fmt_seconds(_entry(summary, workload, m).get("median_s"))
                            for m in modes]
        row += [fmt_ratio(_entry(summary, workload, m).get("vs_plain")) for m in stagio_modes]
        row += [fmt_percent(_entry(summary, workload, m).get("overlap_efficiency"))
                for m in stagio_modes]
        rows.append(row)
    return _table(header, rows)


def _workload_section(results, workload, modes):
    description = results.get("workloads", {}).get(workload, {})
    lines = []
    if description.get("description"):
        lines += [description["description"], ""]
    if description.get("command"):
        lines += [f"`{description['command']}`", ""]
    header = ["mode", "median (s)", "min (s)", "max (s)", "runs", "vs plain", "overlap eff.",
              "prefetch acc.", "prefetch cov.", "storage requests"]
    rows = []
    for mode in modes:
        entry = _entry(results.get("summary", {}), workload, mode)
        runs = str(entry.get("runs", 0))
        if entry.get("failed"):
            runs += f" ({entry['failed']} failed)"
        rows.append([mode, fmt_seconds(entry.get("median_s")), fmt_seconds(entry.get("min_s")),
                     fmt_seconds(entry.get("max_s")), runs, fmt_ratio(entry.get("vs_plain")),
                     fmt_percent(entry.get("overlap_efficiency")),
                     fmt_percent(entry.get("prefetch_accuracy")),
                     fmt_percent(entry.get("prefetch_coverage")),
                     fmt_count(entry.get("emulator_requests"))])
    return lines + _table(header, rows)


def _legend(settings):
    return [
        "- Times are the workload's own elapsed time (barrier to barrier, rank 0), median of the "
        "successful runs, with min and max.",
        "- Modes: `ideal` = `--skip-io` without stagio, the compute-only bound T_ideal; "
        "`plain` = plain MPI-IO on the emulated storage, T_plain; `stagio` = libstagio.so "
        "preloaded with `STAGIO_PREFETCH=none`; `stagio-prefetch` = `STAGIO_PREFETCH=auto`.",
        "- vs plain = T_mode / T_plain (ratio of medians from this run; below 1 is faster).",
        "- overlap eff. = (T_plain − T_mode) / (T_plain − T_ideal): the share of the I/O time "
        "the mode hid; 100% = as fast as compute alone, negative = slower than plain; n/a when "
        "T_plain ≤ T_ideal or a time is missing.",
        "- prefetch acc. = prefetch_used / prefetch_issued; prefetch cov. = prefetch_used / "
        "(prefetch_used + demand_fetches); from stagio's counters summed over the runs; n/a "
        "when stagio does not report the counters, or nothing was issued or fetched.",
        "- storage requests = requests the storage emulator saw per run (median): reads, writes "
        "and syncs of the timed part, the untimed --verify-output reads, and stagio's "
        "write-back at finalize; n/a for `ideal`, which runs without the emulator.",
    ]
