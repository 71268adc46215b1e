"""`stagio run`'s processes: the daemons, the command, and the signals between them.

  1. Start N stagio-iond, each on a unix socket in a private temporary directory and in a
     session of its own (a Ctrl-C at the terminal must not stop them before the command has
     finished with them), and wait until each has written its ready file. A daemon that exits
     first, or stays silent for START_TIMEOUT_S, fails the run with the end of its log; so
     does a signal (the daemons are stopped, the command is not run).
  2. Run the command with libstagio.so preloaded and STAGIO_IOND naming the daemons
     (run_env.py). SIGTERM and SIGHUP sent to `stagio run` are passed on to the command; so is
     SIGINT, except the terminal's own (Ctrl-C), which the command has already received.
  3. SIGTERM every daemon and wait for it: each flushes what it holds dirty, however long that
     takes (a signal during that wait says so; a second one kills the daemons).
  4. Exit with the command's status, or DAEMON_FAILED if the command succeeded but a daemon
     did not start, died during the run, or did not shut down cleanly (exit status 1: a flush
     failed). Daemon output goes to the terminal, each line prefixed "[iond N] ", or to
     --keep-logs DIR/iond-N.log.
"""

import collections
from dataclasses import dataclass
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import layout
from . import run_env

CANNOT_START = 2
DAEMON_FAILED = 3
START_TIMEOUT_S = 30.0
TAIL_LINES = 15
RELAYED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class RunPlan:
    command: tuple
    build_dir: str
    daemons: int = 0          # stagio-iond processes to start; 0: none
    root: str = ""            # their --root
    config: str = ""          # their --config, if any
    daemon_args: tuple = ()   # further stagio-iond arguments
    keep_logs: str = ""       # where their logs go; empty: the terminal

    @property
    def library(self):
        return layout.library(self.build_dir)

    @property
    def daemon_binary(self):
        return layout.iond(self.build_dir)

    def missing(self):
        """What the run needs and does not find, as a message, or None."""
        needed = [(self.library, os.path.isfile, "no libstagio.so (build it, or pass --build)")]
        if self.daemons:
            needed += [(self.daemon_binary, os.path.isfile,
                        "no stagio-iond (build it: ninja stagio-iond)"),
                       (self.root, os.path.isdir, "not a directory")]
            if self.config:
                needed.append((self.config, os.path.isfile, "no such file"))
        for path, exists, problem in needed:
            if not exists(path):
                return f"{path}: {problem}"
        return None


class DaemonFailure(Exception):
    """A daemon did not start; the message says why and ends with its last lines."""


def say(message):
    print(f"stagio run: {message}", file=sys.stderr, flush=True)


class Daemon:
    """One stagio-iond and the thread that copies its output (stdout and stderr) to the
    terminal, prefixed, or to its log file, keeping the last lines for error messages."""

    def __init__(self, index, command, log_file):
        self.index = index
        self.name = f"stagio-iond {index}"
        self.tail = collections.deque(maxlen=TAIL_LINES)
        self.status = None  # the exit status, once finished
        self._sink = open(log_file, "w", encoding="utf-8") if log_file else sys.stderr
        self._prefix = "" if log_file else f"[iond {index}] "
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        start_new_session=True, text=True, errors="replace")
        self._copier = threading.Thread(target=self._copy_output, daemon=True)
        self._copier.start()

    def _copy_output(self):
        for line in self.process.stdout:
            self.tail.append(line.rstrip("\n"))
            self._sink.write(self._prefix + line)
            self._sink.flush()
        self.process.stdout.close()
        if self._sink is not sys.stderr:
            self._sink.close()

    def finish(self):
        """Waits for the process and the last of its output; its exit status."""
        self.status = self.process.wait()
        self._copier.join()
        return self.status

    def last_lines(self):
        return "\n".join(f"  | {line}" for line in self.tail) or "  (no output)"


def start_daemons(plan, run_dir, daemons):
    """Starts the plan's daemons, appending each to `daemons` as it starts; their logs go to
    plan.keep_logs if given."""
    problem = run_env.check_socket_path(run_env.socket_path(run_dir, plan.daemons - 1))
    if problem:
        raise DaemonFailure(problem)
    if plan.keep_logs:
        os.makedirs(plan.keep_logs, exist_ok=True)
    for index in range(plan.daemons):
        command = run_env.daemon_command(plan.daemon_binary, run_dir, index, plan.root,
                                         plan.config, plan.daemon_args)
        log_file = run_env.log_path(plan.keep_logs, index) if plan.keep_logs else ""
        try:
            daemons.append(Daemon(index, command, log_file))
        except OSError as error:
            raise DaemonFailure(f"cannot start {command[0]}: {error.strerror}") from None


def _ready_address(path):
    """The first address of a complete ready file (one address per line), or None."""
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except FileNotFoundError:
        return None
    return text.split("\n", 1)[0].strip() if text.endswith("\n") else None


def wait_until_listening(daemons, run_dir, signals):
    """The daemons' addresses, in daemon order, once every one has written its ready file."""
    addresses = [None] * len(daemons)
    deadline = time.monotonic() + START_TIMEOUT_S
    while None in addresses:
        for daemon in daemons:
            if addresses[daemon.index] is None:
                addresses[daemon.index] = _ready_address(run_env.ready_path(run_dir,
                                                                            daemon.index))
            if addresses[daemon.index] is None and daemon.process.poll() is not None:
                status = run_env.describe_exit(daemon.finish())
                raise DaemonFailure(f"{daemon.name} {status} before it listened:\n"
                                    f"{daemon.last_lines()}")
        if None in addresses and time.monotonic() > deadline:
            late = next(d for d in daemons if addresses[d.index] is None)
            raise DaemonFailure(f"{late.name} did not listen within {START_TIMEOUT_S:.0f} s:"
                                f"\n{late.last_lines()}")
        signals.check_start()
        time.sleep(0.02)
    return addresses


class Interrupted(Exception):
    """A signal came while the daemons were starting: the command is not run."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Signals:
    """SIGINT, SIGTERM and SIGHUP for the whole run, from the first daemon's start on (so that
    no signal can end `stagio run` with its daemons left running): while the daemons start,
    one stops the run; while the command runs, each is passed on to it, but for the terminal's
    Ctrl-C, which it has received already; while the daemons flush, the first is noted and a
    second kills them."""

    def __init__(self):
        self.pending = []       # received before the command started
        self.command = None     # the command's Popen, once it runs
        self.stopping = None    # the daemons, once they are being stopped
        self._saved = {}

    def __enter__(self):
        for signum in RELAYED_SIGNALS:
            self._saved[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc):
        for signum, previous in self._saved.items():
            signal.signal(signum, previous)

    def _handle(self, signum, frame):
        if self.stopping is not None:
            self._hurry(signum)
        elif self.command is not None:
            self._forward(signum)
        else:
            self.pending.append(signum)

    def check_start(self):
        """Raises Interrupted if a signal came before the command started."""
        if self.pending:
            raise Interrupted(self.pending[0])

    def command_started(self, process):
        """From now on signals go to `process`; one that came while it was being started goes
        too."""
        self.command = process
        for signum in self.pending:
            self._forward(signum)
        self.pending.clear()

    def _forward(self, signum):
        if self.command.poll() is None and not _from_terminal(signum):
            self.command.send_signal(signum)

    def _hurry(self, signum):
        self.pending.append(signum)
        if len(self.pending) == 1:
            say("waiting for the daemons to flush their dirty data; signal again to kill them "
                "(data not yet flushed is then lost)")
            return
        for daemon in self.stopping:
            if daemon.process.poll() is None:
                daemon.process.kill()


def _from_terminal(signum):
    """Whether this SIGINT is most likely the terminal's Ctrl-C, which the kernel sends to the
    whole foreground process group: when that group is ours, the command has it too."""
    if signum != signal.SIGINT:
        return False
    try:
        tty = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    try:
        return os.tcgetpgrp(tty) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(tty)


def run_command(command, env, signals):
    """Runs the command in our process group (so that it keeps the terminal); its exit status,
    or 127 if it cannot be started."""
    signals.check_start()
    try:
        process = subprocess.Popen(command, env=env)
    except OSError as error:
        say(f"cannot run {command[0]}: {error.strerror}")
        return 127
    signals.command_started(process)
    return run_env.exit_status(process.wait())


def stop_daemons(daemons, signals):
    """SIGTERMs the daemons still running and waits for them to flush; a message for each that
    failed and was not reported before (one that failed to start was)."""
    failures = []
    signals.pending.clear()
    signals.stopping = daemons
    for daemon in daemons:
        if daemon.status is None and daemon.process.poll() is not None:
            status = run_env.describe_exit(daemon.finish())
            failures.append(f"{daemon.name} {status} during the run:\n{daemon.last_lines()}")
        elif daemon.status is None:
            daemon.process.terminate()
    for daemon in daemons:
        if daemon.status is None and daemon.finish() != 0:
            status = run_env.describe_exit(daemon.status)
            failures.append(f"{daemon.name} {status} at shutdown (1: a flush failed, and "
                            f"its data may not be on storage):\n{daemon.last_lines()}")
    return failures


def run(plan):
    """Runs the plan; the exit status for `stagio run`."""
    problem = plan.missing()
    if problem:
        say(problem)
        return CANNOT_START
    with Signals() as signals:
        if not plan.daemons:
            try:
                return run_command(list(plan.command),
                                   run_env.command_environment(os.environ, plan.library),
                                   signals)
            except Interrupted as interrupted:
                return run_env.exit_status(-interrupted.signum)
        return _run_with_daemons(plan, signals)


def _run_with_daemons(plan, signals):
    run_dir = tempfile.mkdtemp(prefix="stagio-run.")
    daemons = []
    status = None
    try:
        start_daemons(plan, run_dir, daemons)
        addresses = wait_until_listening(daemons, run_dir, signals)
        env = run_env.command_environment(os.environ, plan.library, addresses)
        status = run_command(list(plan.command), env, signals)
    except DaemonFailure as failure:
        say(str(failure))
    except Interrupted as interrupted:
        say(f"{interrupted} while the daemons started; the command was not run")
        status = run_env.exit_status(-interrupted.signum)
    finally:
        failures = stop_daemons(daemons, signals)
        shutil.rmtree(run_dir, ignore_errors=True)
    if status is None or signals.command is None:
        # The command never ran: the daemons held no data, and how they stopped is noise.
        return DAEMON_FAILED if status is None else status
    for failure in failures:
        say(failure)
    if failures and status == 0:
        where = f" (logs in {plan.keep_logs})" if plan.keep_logs else ""
        say(f"the command succeeded but the I/O-node tier did not{where}")
        return DAEMON_FAILED
    return status
