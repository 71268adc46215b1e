"""`stagio bench`: create inputs, run every planned run, write results.json, results.md, plots.

The order of work: check that everything needed is built, create the input files (untimed,
once), then the interleaved runs with a progress line each, then the results. results.json is
rewritten after every run, so an interrupted benchmark still leaves what it measured.
"""

import dataclasses
import datetime
import json
import os
import shutil
import sys
import time

from . import bench_config
from . import execute
from . import launch
from . import machine
from . import markdown
from . import plan
from . import plots
from . import progress
from . import report
from . import summary

# 2: rank counts (settings "ranks" is a list, each run has "ranks", the summary is keyed by
# workload, then rank count, then mode) and suites.
RESULTS_FORMAT = "stagio-bench/2"


def run(config, repo_dir, out=sys.stdout):
    """Runs the benchmark described by config; returns the exit status for the command."""
    artifacts = bench_config.Artifacts.in_build(config.build_dir, config.mpi)
    problems = _preflight(config, artifacts)
    if problems:
        print("stagio bench: cannot run:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    _prepare_directories(config)
    env = launch.launcher_environment(config.mpi, os.environ)
    started = time.monotonic()
    results = _new_results(config, repo_dir)
    try:
        if not _create_inputs(config, env, results, out):
            return _finish(config, results, started, out)
        _run_all(config, artifacts, env, results, started, out)
    except KeyboardInterrupt:
        print("stagio bench: interrupted; writing what was measured", file=out, flush=True)
        _finish(config, results, started, out)
        return 130
    return _finish(config, results, started, out)


def _prepare_directories(config):
    """Creates the directories and removes the previous results from --out, so that nothing
    stale (a plot this run could not draw, logs of old failures) is mistaken for this run's."""
    for directory in (config.data_dir, config.scratch_dir, config.out_dir):
        os.makedirs(directory, exist_ok=True)
    shutil.rmtree(os.path.join(config.out_dir, "logs"), ignore_errors=True)
    for name in ("results.json", "results.md", *plots.PLOT_NAMES):
        execute.remove_quietly(os.path.join(config.out_dir, name))


def _run_all(config, artifacts, env, results, started, out):
    planned = plan.plan_runs(config, artifacts)
    tracker = progress.Progress([p.key for p in planned])
    counts = config.rank_counts
    print(f"stagio bench: {len(planned)} runs ({len(config.workloads)} workloads x "
          f"{len(config.modes)} modes x "
          + (f"{len(counts)} rank counts x " if len(counts) > 1 else "")
          + f"{config.reps} rep{'' if config.reps == 1 else 's'}, "
          f"{', '.join(map(str, counts))} ranks); results go to {config.out_dir}",
          file=out, flush=True)
    for item in planned:
        record, stdout, stderr = execute.execute(item, env, config.timeout_s)
        results["runs"].append(record)
        tracker.finished(item.key, record["wall_s"])
        _report_run(config, tracker, item, record, stdout, stderr, out)
        _save_json(config, results, started)


def _preflight(config, artifacts):
    problems = bench_config.missing_pieces(config, artifacts)
    if problems:
        problems.append(f"build first: cmake --build {config.build_dir}")
    built = bench_config.built_mpi(config.build_dir)
    if built and built != config.mpi:
        problems.append(f"{config.build_dir} is built against {built}, not {config.mpi}: "
                        f"use --mpi {built}, or a build configured with -DSTAGIO_MPI={config.mpi}")
    return problems


def _new_results(config, repo_dir):
    return {
        "format": RESULTS_FORMAT,
        "command": config.command_line,
        "command_line": launch.shell_join(config.command_line),
        "cwd": os.getcwd(),
        "started_at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "duration_s": 0.0,
        "machine": machine.describe_machine(config.mpi),
        "git": machine.git_revision(repo_dir),
        "emulator": {"latency_ms": config.device.latency_ms,
                     "bandwidth_mbps": config.device.bandwidth_mbps,
                     "parallel": config.device.parallel,
                     "seek_ms": config.device.seek_ms},
        # The iond suites' link and daemon options (absent in the other suites' results).
        **({"link": dataclasses.asdict(config.link)} if config.link else {}),
        **({"iond_args": list(config.iond_args)} if config.iond_args else {}),
        "settings": {
            "suite": config.suite,
            "workloads": [w.name for w in config.workloads],
            "modes": [m.name for m in config.modes],
            "reps": config.reps, "ranks": list(config.rank_counts), "mpi": config.mpi,
            "quick": config.quick, "busy": config.busy, "compute_ms": config.compute_ms,
            "timeout_s": config.timeout_s,
            "build": os.path.abspath(config.build_dir), "out": os.path.abspath(config.out_dir),
            "workdir": os.path.abspath(config.work_dir),
            # stagio reads its settings from STAGIO_* variables, which reach every rank.
            "environment": {k: v for k, v in sorted(os.environ.items())
                            if k.startswith("STAGIO_")},
        },
        "workloads": {w.name: _describe_workload(config, w) for w in config.workloads},
        "inputs": [],
        "runs": [],
    }


def _describe_workload(config, workload):
    argv = [workload.program, *workload.parameters(config.quick),
            "--compute-ms", launch.plain_number(config.compute_ms_for(workload))]
    described = {"program": workload.program, "description": workload.description,
                 "parameters": list(workload.parameters(config.quick)),
                 "compute_ms": config.compute_ms_for(workload),
                 "command": launch.shell_join(argv)}
    if workload.device:  # its own, not the one under "emulator"
        described["device"] = dataclasses.asdict(workload.device)
    if workload.stagio_settings:
        described["stagio_settings"] = dict(workload.stagio_settings)
    return described


def _create_inputs(config, env, results, out):
    """Creates each input once, before any timing; False if one could not be made."""
    for workload in config.workloads:
        if not workload.reads_input:
            continue
        command = plan.create_input_command(config, workload)
        status, stdout, stderr, wall = execute.run_job(command, env, config.timeout_s)
        info = _input_line(stdout)
        ok = status == 0 and info is not None
        info = info or {}
        # The program's STAGIO_BENCH_INPUT fields (file, size_bytes, created, ...), with its
        # "workload" (the program's name) replaced by the table's.
        results["inputs"].append({**info, "workload": workload.name,
                                  "command": launch.shell_join(command), "exit_status": status,
                                  "wall_s": round(wall, 3), "ok": ok})
        if not ok:
            print(f"stagio bench: creating the input of {workload.name} failed "
                  f"(exit status {status}):\n  {launch.shell_join(command)}", file=out)
            _print_tail(stderr, out)
            return False
        what = "created" if info.get("created") else "reused"
        print(f"stagio bench: input of {workload.name}: {what} {info.get('file')} "
              f"({info.get('size_bytes', 0) / 2**20:.0f} MiB, {wall:.1f} s)", file=out, flush=True)
    return True


def _input_line(stdout):
    """The object of the STAGIO_BENCH_INPUT line that --create-input prints, or None."""
    for line in stdout.splitlines():
        if line.startswith("STAGIO_BENCH_INPUT "):
            try:
                info = json.loads(line.split(" ", 1)[1])
            except ValueError:
                return None
            return info if isinstance(info, dict) else None
    return None


def _report_run(config, tracker, item, record, stdout, stderr, out):
    if record["ok"]:
        outcome = f"{record['result']['elapsed_s']:7.3f} s"
    else:
        outcome = f"FAILED: {record['error']}"
    print(tracker.line(item.workload.name, item.ranks, item.mode.name, item.rep, config.reps,
                       outcome), file=out, flush=True)
    if not record["ok"]:
        print(f"    {record['command']}", file=out)
        _print_tail(stderr, out)
        logs = os.path.join(config.out_dir, "logs")
        os.makedirs(logs, exist_ok=True)
        stem = os.path.join(logs, plan.run_stem(item.workload.name, item.ranks, item.mode.name,
                                                item.rep))
        for suffix, text in ((".stdout", stdout), (".stderr", stderr)):
            with open(stem + suffix, "w", encoding="utf-8") as stream:
                stream.write(text)


def _print_tail(stderr, out):
    for line in stderr.splitlines()[-execute.STDERR_TAIL_LINES:]:
        print(f"    | {line}", file=out)
    out.flush()


def _failures(results):
    failures = [{"workload": i["workload"], "mode": "create-input", "rep": 0,
                 "error": f"exit status {i['exit_status']}"}
                for i in results["inputs"] if not i["ok"]]
    failures += [{"workload": r["workload"], "ranks": r.get("ranks"), "mode": r["mode"],
                  "rep": r["rep"], "error": r["error"]} for r in results["runs"] if not r["ok"]]
    return failures


def _save_json(config, results, started):
    results["duration_s"] = round(time.monotonic() - started, 1)
    results["failures"] = _failures(results)
    settings = results["settings"]
    results["summary"] = summary.summarize(results["runs"], settings["workloads"],
                                           settings["ranks"], settings["modes"])
    path = os.path.join(config.out_dir, "results.json")
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as stream:
        json.dump(results, stream, indent=1)
        stream.write("\n")
    os.replace(temporary, path)  # a reader never sees half a file
    return path


def _finish(config, results, started, out):
    results_path = _save_json(config, results, started)
    markdown_path = os.path.join(config.out_dir, "results.md")
    with open(markdown_path, "w", encoding="utf-8") as stream:
        stream.write(report.render_markdown(results))
    written, warning = [], None
    if results["runs"]:
        written, warning = plots.write_plots(results, results_path, config.out_dir)
    if warning:
        print(f"stagio bench: {warning}", file=out)
    print(f"stagio bench: {len(results['runs'])} runs in "
          f"{progress.format_duration(results['duration_s'])}; results in {config.out_dir}:",
          file=out)
    for path in [results_path, markdown_path, *written]:
        print(f"  {path}", file=out)
    failures = results["failures"]
    if failures:
        logs = os.path.join(config.out_dir, "logs")
        where = f" (their output is in {logs})" if os.path.isdir(logs) else ""
        print(f"stagio bench: {len(failures)} failed run{'' if len(failures) == 1 else 's'}"
              f"{where}:", file=out)
        for failure in failures:
            print(f"  {markdown.describe_failure(failure)}", file=out)
        out.flush()
        return 1
    out.flush()
    return 0
