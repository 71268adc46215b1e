"""What every results.md shares: number formats, tables, the header that says how the results
were made, and the list of failed runs. report.py and scaling_report.py build on it."""

import shlex

from . import modes as mode_table
from . import results_view

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


def fmt_bytes(value):
    """1048576 -> "1.00 MiB", 3072 -> "3.0 KiB": request and transfer sizes."""
    if value is None:
        return NA
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.2f} {unit}" if unit != "KiB" else f"{value / size:.1f} {unit}"
    return f"{value:.0f} B"


def table(header, rows, numbers=True):
    """A Markdown table, the first column left-aligned and the others right-aligned when they
    hold numbers (numbers=True), left-aligned otherwise."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 or not numbers else "---:"
                            for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _on_real_storage(mode_names):
    """True if no mode of the run does I/O on the emulated device (the overhead suite)."""
    known = [n for n in mode_names if n in mode_table.MODE_NAMES]
    return bool(known) and not any(mode_table.mode_by_name(n).emulated for n in known)


def header(results):
    """The command, when, where, what ran and on which emulated device."""
    settings = results.get("settings", {})
    machine = results.get("machine", {})
    emulator = results.get("emulator", {})
    reps = settings.get("reps")
    counts = results_view.rank_counts_of(settings)
    # STAGIO_* variables in the bench's environment reached every run: part of the command.
    environment = " ".join(f"{name}={shlex.quote(value)}"
                           for name, value in settings.get("environment", {}).items())
    command = results.get("command_line", "?")
    lines = ["Produced by:", "", "```sh", f"{environment} {command}" if environment else command,
             "```", ""]
    lines.append(f"- When: {results.get('started_at', '?')}, "
                 f"{results.get('duration_s', 0.0):.0f} s in all"
                 + (" (quick mode)" if settings.get("quick") else ""))
    lines.append(f"- Machine: {machine.get('hostname', '?')}, {machine.get('nproc', '?')} cores, "
                 f"{machine.get('mpi_version') or settings.get('mpi', '?')}")
    git = results.get("git") or {}
    if git.get("commit"):
        lines.append(f"- stagio: {git['commit'][:12]}" + (" (with local changes)"
                                                          if git.get("dirty") else ""))
    ranks = ", ".join(map(str, counts)) if counts else "?"
    lines.append(f"- Runs: {ranks} ranks, {reps} rep{'' if reps == 1 else 's'} per workload"
                 + (", rank count" if len(counts) > 1 else "")
                 + " and mode, modes interleaved (in reverse order every other rep)"
                 + (", busy compute" if settings.get("busy") else ", compute phases sleep"))
    environment = settings.get("environment") or {}
    if environment:
        lines.append("- stagio settings from the environment: " +
                     ", ".join(f"`{k}={v}`" for k, v in environment.items()))
    if _on_real_storage(settings.get("modes", [])):
        lines.append(f"- Storage: the real file system under {settings.get('workdir', '?')} "
                     "(no emulated device)")
    else:
        lines.append(f"- Emulated storage: {emulator.get('latency_ms', '?')} ms per request, "
                     f"{emulator.get('bandwidth_mbps', '?')} MB/s shared, "
                     f"{emulator.get('parallel', '?')} requests in parallel"
                     + (f", {emulator['seek_ms']} ms seek per request that no other request's "
                        "overlaps" if emulator.get("seek_ms") else ""))
    link = results.get("link")
    if link:  # the iond suites
        slower = link.get("bandwidth_mbps", 0) < emulator.get("bandwidth_mbps", 0)
        lines.append(f"- Emulated link (compute node to I/O node): {link.get('latency_ms')} ms "
                     f"one way, {link.get('bandwidth_mbps')} MB/s each way: "
                     + ("slower than the device, the bottleneck (--link-bottleneck)" if slower
                        else "a real cost, but faster than the device (the default link)"))
    if results.get("iond_args"):
        lines.append("- Every stagio-iond also got: `" + " ".join(results["iond_args"]) + "`")
    return lines


def workload_description(results, workload):
    """The workload's description and command line, each a paragraph, when the results have
    them."""
    description = results.get("workloads", {}).get(workload, {})
    lines = []
    if description.get("description"):
        lines += [description["description"], ""]
    if description.get("command"):
        lines += [f"`{description['command']}`", ""]
    device = description.get("device")
    if device:  # a workload defined on its own device, not the run's
        lines += [f"Its own emulated device: {device.get('latency_ms')} ms per request, "
                  f"{device.get('bandwidth_mbps')} MB/s shared, {device.get('parallel')} "
                  "requests in parallel.", ""]
    settings = description.get("stagio_settings")
    if settings:
        lines += ["Its stagio runs set " +
                  ", ".join(f"`{k}={v}`" for k, v in settings.items()) + ".", ""]
    return lines


def modes_legend(mode_names):
    """One legend line per mode of the run, from the mode table."""
    lines = []
    for name in mode_names:
        try:
            lines.append(f"- `{name}`: {mode_table.mode_by_name(name).description}.")
        except KeyError:
            lines.append(f"- `{name}`: a mode this version of the harness does not know.")
    return lines


def describe_failure(failure):
    """"topk 4 ranks stagio rep 2: exit status 1" (the rank count when the record has it)."""
    ranks = f" {failure['ranks']} ranks" if failure.get("ranks") is not None else ""
    return (f"{failure['workload']}{ranks} {failure['mode']} rep {failure['rep']}: "
            f"{failure['error']}")


def failures_section(results):
    failures = results.get("failures", [])
    if not failures:
        return []
    return ["", "## Failed runs", ""] + [f"- {describe_failure(f)}" for f in failures]
