"""Tests of `stagio run`: its command line and the environment and daemon commands it composes
(pure), then its process handling against a fake stagio-iond (a shell script that behaves as
the real one does at start and at SIGTERM). No MPI:
    python3 -m unittest discover -s tools/tests -p test_run.py
"""

import contextlib
import io
import os
import signal
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stagio_tools import cli  # noqa: E402
from stagio_tools import layout  # noqa: E402
from stagio_tools import run_cli  # noqa: E402
from stagio_tools import run_env  # noqa: E402
from stagio_tools import run_job  # noqa: E402


def parse(argv):
    """The RunPlan of `stagio run ARGV`; SystemExit on a usage error, with stderr swallowed."""
    parser = cli.build_parser()
    with contextlib.redirect_stderr(io.StringIO()):
        args = parser.parse_args(["run", *argv])
        run_parser = parser._subparsers._group_actions[0].choices["run"]
        return run_cli.make_plan(args, run_parser)


class RunCommandLineTest(unittest.TestCase):
    def test_the_command_follows_the_double_dash(self):
        plan = parse(["--iond", "2", "--", "mpiexec.mpich", "-n", "4", "./app", "--iond", "3"])
        self.assertEqual(plan.command, ("mpiexec.mpich", "-n", "4", "./app", "--iond", "3"))
        self.assertEqual(plan.daemons, 2)

    def test_the_double_dash_is_optional(self):
        self.assertEqual(parse(["mpiexec.mpich", "-n", "2", "./app"]).command,
                         ("mpiexec.mpich", "-n", "2", "./app"))

    def test_defaults(self):
        plan = parse(["--", "./app"])
        self.assertEqual(plan.daemons, 0)
        self.assertEqual(plan.root, os.getcwd())
        self.assertEqual(plan.build_dir, os.path.join(cli.REPO_DIR, "build"))
        self.assertEqual((plan.config, plan.daemon_args, plan.keep_logs), ("", (), ""))
        self.assertEqual(plan.library, os.path.join(cli.REPO_DIR, "build", "libstagio.so"))
        self.assertEqual(plan.daemon_binary, os.path.join(cli.REPO_DIR, "build", "stagio-iond"))

    def test_daemon_options_become_absolute(self):
        plan = parse(["--build", "b", "--iond", "1", "--iond-root", "data", "--iond-config",
                      "c.json", "--keep-logs", "logs", "--", "./app"])
        self.assertEqual(plan.build_dir, os.path.abspath("b"))
        self.assertEqual(plan.root, os.path.abspath("data"))
        self.assertEqual(plan.config, os.path.abspath("c.json"))
        self.assertEqual(plan.keep_logs, os.path.abspath("logs"))

    def test_daemon_arguments_in_order(self):
        plan = parse(["--iond", "1", "--iond-arg=--cache-size=64M", "--iond-arg", "x",
                      "--iond-arg=--io-threads", "--iond-arg=2", "--", "./app"])
        self.assertEqual(plan.daemon_args, ("--cache-size=64M", "x", "--io-threads", "2"))

    def test_usage_errors(self):
        for argv in ([], ["--"], ["--iond", "-1", "--", "./app"], ["--iond", "x", "--", "a"],
                     ["--keep-logs", "d", "--", "./app"], ["--iond-root", "d", "--", "./app"],
                     ["--iond-arg=--x", "--", "./app"], ["--iond-config", "f", "--", "./a"]):
            with self.subTest(argv=argv), self.assertRaises(SystemExit) as raised:
                parse(argv)
            self.assertEqual(raised.exception.code, 2)

    def test_zero_daemons_is_no_daemon(self):
        self.assertEqual(parse(["--iond", "0", "--", "./app"]).daemons, 0)


class InstalledLayoutTest(unittest.TestCase):
    """An installed `stagio` finds the library and the daemon through installed.json."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.addCleanup(setattr, layout, "INSTALLED", layout.INSTALLED)
        layout.INSTALLED = os.path.join(self.dir.name, "installed.json")

    def test_the_source_tree_uses_its_build_directory(self):
        self.assertEqual(layout.default_build_dir("/repo"), "/repo/build")
        self.assertEqual(layout.library("/b"), "/b/libstagio.so")

    def test_an_install_uses_the_files_it_names(self):
        with open(layout.INSTALLED, "w") as handle:
            handle.write('{"library": "/p/lib/libstagio.so", "iond": "/p/bin/stagio-iond"}')
        plan = parse(["--", "./app"])
        self.assertEqual(plan.library, "/p/lib/libstagio.so")
        self.assertEqual(plan.daemon_binary, "/p/bin/stagio-iond")
        # --build still wins.
        self.assertEqual(parse(["--build", "/b", "--", "./app"]).library, "/b/libstagio.so")


class RunEnvironmentTest(unittest.TestCase):
    LIB = "/b/libstagio.so"

    def test_preload_goes_first_and_keeps_the_rest(self):
        self.assertEqual(run_env.preload_list(self.LIB, ""), self.LIB)
        self.assertEqual(run_env.preload_list(self.LIB, "/e/libemu.so"),
                         "/b/libstagio.so:/e/libemu.so")
        self.assertEqual(run_env.preload_list(self.LIB, "/x.so /y.so::"),
                         "/b/libstagio.so:/x.so:/y.so")

    def test_preload_has_one_copy_of_stagio(self):
        self.assertEqual(run_env.preload_list(self.LIB, "/e/emu.so:/b/libstagio.so"),
                         "/b/libstagio.so:/e/emu.so")
        self.assertEqual(run_env.preload_list(self.LIB, "/b/../b/libstagio.so"), self.LIB)

    def test_command_environment_without_daemons(self):
        base = {"PATH": "/bin", "STAGIO_IOND": "host:7070", "LD_PRELOAD": "/e/emu.so"}
        env = run_env.command_environment(base, self.LIB)
        self.assertEqual(env, {"PATH": "/bin", "STAGIO_IOND": "host:7070",
                               "LD_PRELOAD": "/b/libstagio.so:/e/emu.so"})
        self.assertEqual(base["LD_PRELOAD"], "/e/emu.so")  # the caller's is left alone

    def test_command_environment_names_the_daemons_in_order(self):
        env = run_env.command_environment({"STAGIO_IOND": "old:1"}, self.LIB,
                                          ["unix:/t/iond-0.sock", "unix:/t/iond-1.sock"])
        self.assertEqual(env["STAGIO_IOND"], "unix:/t/iond-0.sock,unix:/t/iond-1.sock")
        self.assertEqual(env["LD_PRELOAD"], self.LIB)

    def test_daemon_command(self):
        self.assertEqual(
            run_env.daemon_command("/b/stagio-iond", "/t", 1, "/data"),
            ["/b/stagio-iond", "--listen", "unix:/t/iond-1.sock", "--root", "/data",
             "--ready-file", "/t/ready-1"])
        self.assertEqual(
            run_env.daemon_command("/b/stagio-iond", "/t", 0, "/data", "/c.json",
                                   ("--cache-size", "64M"))[-4:],
            ["--config", "/c.json", "--cache-size", "64M"])

    def test_socket_path_limit(self):
        self.assertIsNone(run_env.check_socket_path("/tmp/stagio-run.abc/iond-0.sock"))
        self.assertIn("TMPDIR", run_env.check_socket_path("/" + "d" * 120 + "/iond-0.sock"))

    def test_exit_status_and_its_description(self):
        self.assertEqual(run_env.exit_status(3), 3)
        self.assertEqual(run_env.exit_status(-signal.SIGKILL), 137)
        self.assertEqual(run_env.describe_exit(1), "exited with status 1")
        self.assertEqual(run_env.describe_exit(-9), "was killed by SIGKILL")


# A stand-in for stagio-iond: writes its --listen address to its --ready-file, then waits for
# SIGTERM and exits with $FAKE_IOND_EXIT. FAKE_IOND_FAIL_START=1: exits at once with a message;
# FAKE_IOND_SILENT=1: never writes the ready file. It gives up by itself after a minute, so
# that a failed test leaves nothing running for long.
FAKE_IOND = """\
#!/bin/sh
listen= ready=
while [ $# -gt 0 ]; do
  case $1 in --listen) listen=$2; shift ;; --ready-file) ready=$2; shift ;; esac
  shift
done
if [ "${FAKE_IOND_FAIL_START:-0}" = 1 ]; then echo "stagio-iond: no root" >&2; exit 2; fi
trap 'echo "stagio-iond: flushed"; exit ${FAKE_IOND_EXIT:-0}' TERM
echo "stagio-iond: listening on $listen" >&2
if [ "${FAKE_IOND_SILENT:-0}" != 1 ]; then
  echo "$listen" > "$ready.tmp" && mv "$ready.tmp" "$ready"
fi
i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
"""


class RunProcessesTest(unittest.TestCase):
    """run_job.run against the fake daemon, with commands that report what they saw."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.build = os.path.join(self.dir.name, "build")
        os.mkdir(self.build)
        # libc stands in for libstagio.so: preloading it changes nothing.
        os.symlink(loaded_library("libc.so"), os.path.join(self.build, "libstagio.so"))
        daemon = os.path.join(self.build, "stagio-iond")
        with open(daemon, "w") as stream:
            stream.write(FAKE_IOND)
        os.chmod(daemon, os.stat(daemon).st_mode | stat.S_IXUSR)
        self.logs = os.path.join(self.dir.name, "logs")
        self.seen = os.path.join(self.dir.name, "seen")
        self.addCleanup(os.environ.pop, "FAKE_IOND_EXIT", None)
        self.addCleanup(os.environ.pop, "FAKE_IOND_FAIL_START", None)

    def plan(self, script, daemons=2):
        command = ("sh", "-c", script)
        return run_job.RunPlan(command=command, build_dir=self.build, daemons=daemons,
                               root=self.dir.name, keep_logs=self.logs if daemons else "")

    def run_quietly(self, plan):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            status = run_job.run(plan)
        return status, err.getvalue()

    def read_log(self, index):
        with open(run_env.log_path(self.logs, index)) as stream:
            return stream.read()

    def test_the_command_sees_the_daemons_and_its_status_is_returned(self):
        status, _ = self.run_quietly(self.plan(f'echo "$STAGIO_IOND" > {self.seen}; exit 7'))
        self.assertEqual(status, 7)
        with open(self.seen) as stream:
            addresses = stream.read().strip().split(",")
        self.assertEqual(len(addresses), 2)
        self.assertTrue(addresses[0].startswith("unix:") and addresses[0].endswith("iond-0.sock"))
        self.assertTrue(addresses[1].endswith("iond-1.sock"))
        self.assertFalse(os.path.exists(os.path.dirname(addresses[0][len("unix:"):])))
        for index in (0, 1):  # stopped with SIGTERM, after the command
            self.assertIn("stagio-iond: flushed", self.read_log(index))

    def test_a_failed_flush_fails_a_successful_command(self):
        os.environ["FAKE_IOND_EXIT"] = "1"
        status, err = self.run_quietly(self.plan("true"))
        self.assertEqual(status, run_job.DAEMON_FAILED)
        self.assertIn("stagio-iond 0 exited with status 1 at shutdown", err)
        self.assertIn("| stagio-iond: flushed", err)

    def test_a_daemon_that_exits_at_start_is_shown_and_the_command_not_run(self):
        os.environ["FAKE_IOND_FAIL_START"] = "1"
        status, err = self.run_quietly(self.plan(f"touch {self.seen}"))
        self.assertEqual(status, run_job.DAEMON_FAILED)
        self.assertIn("exited with status 2 before it listened", err)
        self.assertIn("| stagio-iond: no root", err)
        self.assertFalse(os.path.exists(self.seen))

    def test_a_daemon_killed_during_the_run_is_reported(self):
        # Killed, and a zombie before the command ends: stagio run sees it dead.
        script = ('pid=$(pgrep -f -- "--listen ${STAGIO_IOND#*,} "); kill -9 $pid; '
                  'while [ "$(cut -d" " -f3 /proc/$pid/stat)" != Z ]; do sleep 0.01; done')
        status, err = self.run_quietly(self.plan(script))
        self.assertEqual(status, run_job.DAEMON_FAILED)
        self.assertIn("stagio-iond 1 was killed by SIGKILL during the run", err)

    def test_daemon_output_is_prefixed_on_the_terminal(self):
        plan = run_job.RunPlan(command=("true",), build_dir=self.build, daemons=1,
                               root=self.dir.name)
        status, err = self.run_quietly(plan)
        self.assertEqual(status, 0)
        self.assertIn("[iond 0] stagio-iond: listening on unix:", err)

    def test_missing_files_stop_the_run_before_it_starts(self):
        os.remove(os.path.join(self.build, "stagio-iond"))
        status, err = self.run_quietly(self.plan(f"touch {self.seen}"))
        self.assertEqual(status, run_job.CANNOT_START)
        self.assertIn("ninja stagio-iond", err)
        self.assertFalse(os.path.exists(self.seen))

    def start_runner(self, command):
        """`stagio run --iond 1 --keep-logs LOGS -- command` in a child process, so that a
        signal can go to it alone."""
        runner = subprocess.Popen(
            [sys.executable, os.path.join(cli.REPO_DIR, "tools", "stagio"), "run", "--build",
             self.build, "--iond", "1", "--keep-logs", self.logs, "--", *command],
            stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: runner.poll() is None and runner.kill())
        return runner

    def test_sigterm_reaches_the_command_and_the_daemons_still_flush(self):
        started = os.path.join(self.dir.name, "command-started")
        script = (f"trap 'echo got-term > {self.seen}; exit 5' TERM; touch {started}; "
                  "i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done")
        runner = self.start_runner(["sh", "-c", script])
        wait_until(lambda: os.path.exists(started), runner)
        runner.send_signal(signal.SIGTERM)
        _, err = runner.communicate(timeout=60)
        self.assertEqual(runner.returncode, 5, err)
        with open(self.seen) as stream:
            self.assertEqual(stream.read().strip(), "got-term")
        self.assertIn("stagio-iond: flushed", self.read_log(0))

    def test_a_signal_while_the_daemons_start_stops_them_and_the_run(self):
        os.environ["FAKE_IOND_SILENT"] = "1"
        self.addCleanup(os.environ.pop, "FAKE_IOND_SILENT", None)
        runner = self.start_runner(["touch", self.seen])
        log = run_env.log_path(self.logs, 0)
        wait_until(lambda: os.path.exists(log) and "listening" in self.read_log(0), runner)
        runner.send_signal(signal.SIGTERM)
        _, err = runner.communicate(timeout=60)
        self.assertEqual(runner.returncode, 128 + signal.SIGTERM, err)
        self.assertIn("SIGTERM while the daemons started; the command was not run", err)
        self.assertFalse(os.path.exists(self.seen))
        self.assertIn("stagio-iond: flushed", self.read_log(0))  # stopped, not left running


def wait_until(condition, process):
    """Polls `condition` until it holds; fails if `process` ends first."""
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"stagio run ended early: {process.communicate()[1]}")
        try:
            process.wait(timeout=0.02)
        except subprocess.TimeoutExpired:
            pass


def loaded_library(name):
    """The path of a shared library this process has loaded, e.g. "libc.so"."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith(name):
                return path
    raise unittest.SkipTest(f"no {name} in /proc/self/maps")


if __name__ == "__main__":
    unittest.main()
