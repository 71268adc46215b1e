"""Runs one benchmark command against its own stagio-iond, reached through stagio-link.

    python3 with_iond.py --emulator E --iond D --link L --data-dir DIR --scratch PREFIX
        [--latency-ms 5 --bandwidth-mbps 200 --parallel 8 --seek-ms 0] [--link-latency-ms 1
        --link-bandwidth-mbps 400] [--iond-stats FILE] [--app-emu-stats FILE] [--segstore]
        [--iond-arg ARG ...] -- command args...

The `iond` mode of `stagio bench` (modes.py) runs every job through this, so a run's command
line, pasted into a shell, reproduces it whole:
  1. start the daemon under stagio-emu with the device alone (its storage requests are what
     the emulator counts for the run: --iond-stats), listening on an ephemeral loopback port,
     and wait for its --ready-file; with --segstore, it keeps a segment store in a new
     directory PREFIX.segments (on the scratch disk, not emulated), removed after the run;
  2. start stagio-link in front of it, and wait for its ready file; with no link (latency and
     bandwidth both 0) there is nothing to emulate, and the ranks reach the daemon directly;
  3. run the command, with every ADDRESS_TOKEN in it replaced by the relay's address (the
     ranks get STAGIO_IOND=@IOND@: the port is known only now);
  4. SIGTERM the daemon (stagio-emu passes it on) and time its graceful shutdown, which flushes
     what it holds dirty: not part of the workload's time, only noted; then SIGTERM the relay;
  5. print one line `STAGIO_IOND_RUN {json}` (shutdown time, exit statuses, the daemon's
     counters from its --stats, the relay's, and the app's own emulator counters) and exit with the command's status, or FAILED_DAEMON when the
     command succeeded but the daemon did not start, or did not shut down cleanly.

Standard library only, and no imports from the package, so it runs as a plain script.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

ADDRESS_TOKEN = "@IOND@"
LINE_PREFIX = "STAGIO_IOND_RUN "
FAILED_DAEMON = 3
DAEMON_STATS = ".iond-stats.json"  # after --scratch: the daemon's own counters (--stats)
SEGMENTS = ".segments"  # after --scratch: the daemon's segment store, with --segstore
START_TIMEOUT_S = 30.0
SHUTDOWN_TIMEOUT_S = 300.0   # the daemon flushes everything dirty first
LOG_TAIL_LINES = 15


class DaemonFailure(Exception):
    """The daemon or the relay did not start; the message says why."""


def substitute_address(command, address):
    """The command with every ADDRESS_TOKEN replaced by the relay's address."""
    return [part.replace(ADDRESS_TOKEN, address) for part in command]


def daemon_command(args, ready_file):
    """stagio-emu (the device alone) running stagio-iond on an ephemeral loopback port."""
    emulated = [args.emulator, "--dir", args.data_dir, "--latency-ms", args.latency_ms,
                "--bandwidth-mbps", args.bandwidth_mbps, "--parallel", args.parallel]
    if args.seek_ms not in ("", "0"):
        emulated += ["--seek-ms", args.seek_ms]
    if args.iond_stats:
        emulated += ["--stats", args.iond_stats]
    return emulated + ["--", args.iond, "--listen", "127.0.0.1:0", "--root", args.data_dir,
                       "--ready-file", ready_file, "--stats", args.scratch + DAEMON_STATS,
                       *args.iond_arg, *segstore_options(args)]


def segstore_options(args):
    return ["--segstore", args.scratch + SEGMENTS] if args.segstore else []


def has_link(args):
    """Whether there is a link to emulate between the ranks and the daemon."""
    return float(args.link_latency_ms) > 0 or float(args.link_bandwidth_mbps) > 0


def relay_command(args, target, ready_file, stats_file):
    return [args.link, "--listen", "127.0.0.1:0", "--to", target,
            "--latency-ms", args.link_latency_ms, "--bandwidth-mbps", args.link_bandwidth_mbps,
            "--ready-file", ready_file, "--stats", stats_file]


def first_line(path):
    with open(path, encoding="utf-8") as stream:
        return stream.readline().strip()


def wait_for_ready_file(path, process, what, log):
    """The first line of `path` (an address) once it exists; DaemonFailure if `process` ends
    first or START_TIMEOUT_S passes."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if os.path.exists(path) and first_line(path):
            return first_line(path)
        if process.poll() is not None:
            raise DaemonFailure(f"{what} exited with status {process.returncode} before it "
                                f"listened\n{log_tail(log)}")
        time.sleep(0.02)
    raise DaemonFailure(f"{what} wrote no {path} within {START_TIMEOUT_S:.0f} s\n{log_tail(log)}")


def log_tail(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            lines = stream.read().splitlines()[-LOG_TAIL_LINES:]
    except OSError:
        return f"({path}: no log)"
    return "\n".join(f"  | {line}" for line in lines) or f"  ({path} is empty)"


def stop(process, timeout_s):
    """SIGTERM, then wait; (exit status or None if it had to be killed, seconds it took)."""
    started = time.monotonic()
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        status = None
    return status, time.monotonic() - started


def read_json(path):
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream)
    except (OSError, ValueError):
        return None


def remove_quietly(*paths):
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass


def start(command, log):
    with open(log, "w", encoding="utf-8") as stream:
        return subprocess.Popen(command, stdout=stream, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)


def run(args):
    """The steps of the module docstring; returns the exit status."""
    prefix = args.scratch
    ready = {"iond": prefix + ".iond.ready", "link": prefix + ".link.ready"}
    logs = {"iond": prefix + ".iond.log", "link": prefix + ".link.log"}
    link_stats = prefix + ".link.json"
    daemon_stats = prefix + DAEMON_STATS
    remove_quietly(*ready.values(), link_stats, daemon_stats, args.app_emu_stats)
    report = {"iond_exit": None, "iond_shutdown_s": None, "link": None, "app_direct": None}
    processes = {}
    status = None
    if args.segstore:
        shutil.rmtree(prefix + SEGMENTS, ignore_errors=True)
        os.makedirs(prefix + SEGMENTS)
    try:
        processes["iond"] = start(daemon_command(args, ready["iond"]), logs["iond"])
        target = wait_for_ready_file(ready["iond"], processes["iond"], "stagio-iond",
                                     logs["iond"])
        address = target
        if has_link(args):
            processes["link"] = start(relay_command(args, target, ready["link"], link_stats),
                                      logs["link"])
            address = wait_for_ready_file(ready["link"], processes["link"], "stagio-link",
                                          logs["link"])
        report["address"] = {"iond": target, "link": address}
        sys.stdout.flush()
        status = subprocess.run(substitute_address(args.command, address), check=False).returncode
    except DaemonFailure as failure:
        report["error"] = str(failure).splitlines()[0]
        print(f"with_iond: {failure}", file=sys.stderr)
    finally:
        if "iond" in processes:
            report["iond_exit"], report["iond_shutdown_s"] = stop(processes["iond"],
                                                                  SHUTDOWN_TIMEOUT_S)
        if "link" in processes:
            stop(processes["link"], 10.0)
    report["link"] = read_json(link_stats)
    report["daemon"] = read_json(daemon_stats)
    if args.app_emu_stats:
        report["app_direct"] = read_json(args.app_emu_stats)
    remove_quietly(args.app_emu_stats, link_stats, daemon_stats)
    if args.segstore:
        shutil.rmtree(prefix + SEGMENTS, ignore_errors=True)
    if status is not None and report["iond_exit"] != 0:
        report["error"] = (f"stagio-iond's shutdown failed (exit status {report['iond_exit']}, "
                           "None: killed after the time limit)")
        print(f"with_iond: {report['error']}\n{log_tail(logs['iond'])}", file=sys.stderr)
    print(LINE_PREFIX + json.dumps(report), flush=True)
    if status is None:
        return FAILED_DAEMON
    return status if status != 0 else (0 if report["iond_exit"] == 0 else FAILED_DAEMON)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("--emulator", "--iond", "--link", "--data-dir", "--scratch"):
        parser.add_argument(name, required=True)
    parser.add_argument("--latency-ms", default="5")
    parser.add_argument("--bandwidth-mbps", default="200")
    parser.add_argument("--parallel", default="8")
    parser.add_argument("--seek-ms", default="0")
    parser.add_argument("--segstore", action="store_true",
                        help="give the daemon a segment store in PREFIX.segments")
    parser.add_argument("--link-latency-ms", default="0")
    parser.add_argument("--link-bandwidth-mbps", default="0")
    parser.add_argument("--iond-stats", default="")
    parser.add_argument("--app-emu-stats", default="")
    parser.add_argument("--iond-arg", action="append", default=[],
                        help="one more argument for stagio-iond (repeat)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        parser.error("no command to run (put it after --)")
    return args


if __name__ == "__main__":
    sys.exit(run(parse_args(sys.argv[1:])))
