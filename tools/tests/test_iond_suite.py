"""Unit tests of the iond suites of `stagio bench` (issue 6): their workloads, modes and sweep
points, how a run with a daemon is put together (with_iond.py), the link, issue 6's targets,
the reports and the plots. No MPI, no daemon; the plots only where matplotlib is installed.
"""

import importlib.util
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stagio_tools import bench_cli  # noqa: E402
from stagio_tools import bench_config  # noqa: E402
from stagio_tools import cli  # noqa: E402
from stagio_tools import iond_modes  # noqa: E402
from stagio_tools import iond_targets as targets  # noqa: E402
from stagio_tools import launch  # noqa: E402
from stagio_tools import metrics  # noqa: E402
from stagio_tools import modes  # noqa: E402
from stagio_tools import plan  # noqa: E402
from stagio_tools import plots  # noqa: E402
from stagio_tools import report  # noqa: E402
from stagio_tools import resultline  # noqa: E402
from stagio_tools import suites  # noqa: E402
from stagio_tools import summary  # noqa: E402
from stagio_tools import with_iond  # noqa: E402
from stagio_tools import workloads  # noqa: E402

from fixtures import RESULT, make_run, png_names, table_shape_errors  # noqa: E402

IOND = suites.suite_by_name("iond")
SWEEP = suites.suite_by_name("iond-sweep")
WRITE, READ, BTIO = "iond-simpario-write", "iond-simpario-read", "iond-btio-write"
ARTIFACTS = bench_config.Artifacts.in_build("/b", "mpich")


def config_of(*argv):
    return bench_cli.make_config(cli.build_parser().parse_args(["bench", *argv]))


class SuiteTest(unittest.TestCase):
    def test_the_iond_suite(self):
        self.assertEqual(IOND.workloads, (WRITE, READ, BTIO))
        self.assertEqual(IOND.modes, ("plain", "client", "iond"))
        self.assertEqual(IOND.report, suites.IOND)
        self.assertEqual((IOND.rank_counts, IOND.quick_rank_counts), ((4, 8), (4,)))

    def test_every_workload_runs_at_4_and_8_ranks(self):
        # The issue asks for SimParIO and BTIO at 4 and 8 ranks.
        for name in (WRITE, READ, BTIO):
            self.assertEqual(workloads.workload_by_name(name).ranks, (4, 8))

    def test_500_ms_compute_and_short_quick_runs(self):
        config = config_of("--suite", "iond", "--quick")
        for name in IOND.workloads:
            workload = workloads.workload_by_name(name)
            self.assertEqual(workload.compute_ms, 500.0)
            self.assertEqual(config.compute_ms_for(workload), 100.0)
            self.assertEqual(config_of("--suite", "iond").compute_ms_for(workload), 500.0)
        self.assertEqual(config.reps, 1)

    def test_the_link_is_a_cost_and_bottleneck_slower_than_the_device(self):
        device = launch.Device()
        self.assertGreater(IOND.link.bandwidth_mbps, device.bandwidth_mbps)
        self.assertLess(IOND.bottleneck_link.bandwidth_mbps, device.bandwidth_mbps)
        self.assertEqual(config_of("--suite", "iond").link, IOND.link)
        self.assertEqual(config_of("--suite", "iond", "--link-bottleneck").link,
                         IOND.bottleneck_link)
        self.assertIsNone(config_of("all").link)

    def test_the_sweep_has_every_point_of_both_grids(self):
        points = iond_modes.SWEEP_POINTS
        self.assertEqual(len(points), 6 * 4 + 4 * 4)
        self.assertEqual(SWEEP.modes[:2], ("plain", "client"))
        self.assertEqual(len(SWEEP.modes), 2 + len(points))
        self.assertEqual(len({p.mode for p in points}), len(points))

    def test_a_sweep_point_sets_both_tiers(self):
        mode = modes.mode_by_name("iond-wb-c6.25-d50")
        self.assertEqual(iond_modes.sweep_point(mode.name).client, 6.25)
        self.assertEqual(dict(mode.settings), {"STAGIO_WB_HIGH": "6.25", "STAGIO_WB_LOW": "3.125",
                                               "STAGIO_CACHE_SIZE": "64M",
                                               "STAGIO_WB_QUIET": "0"})
        self.assertEqual(mode.iond_args, ("--write-back-high", "50", "--write-back-low", "25",
                                          "--cache-size", "512M"))
        cache = modes.mode_by_name("iond-cache-c0-d1M")
        self.assertEqual(cache.iond_args[-2:], ("--cache-size", "1M"))
        self.assertIn(("STAGIO_CACHE_SIZE", "0"), cache.settings)
        self.assertIn(("STAGIO_WB_HIGH", "6.25"), cache.settings)
        self.assertIsNone(iond_modes.sweep_point("iond"))


def _iond_config(**overrides):
    values = dict(workloads=[workloads.workload_by_name(n) for n in IOND.workloads],
                  modes=[modes.mode_by_name(n) for n in IOND.modes], reps=1, rank_counts=(4, 8),
                  mpi="mpich", build_dir="/b", out_dir="/o", work_dir="/w",
                  device=launch.Device(), suite="iond", link=IOND.link,
                  iond_args=IOND.iond_args)
    values.update(overrides)
    return bench_config.BenchConfig(**values)


class PlanTest(unittest.TestCase):
    def setUp(self):
        self.runs = plan.plan_runs(_iond_config(), ARTIFACTS)

    def run_of(self, workload, ranks, mode):
        return next(r for r in self.runs
                    if (r.workload.name, r.ranks, r.mode.name) == (workload, ranks, mode))

    def test_every_workload_runs_at_4_and_8_ranks(self):
        self.assertEqual(sorted({(r.workload.name, r.ranks) for r in self.runs}),
                         [(BTIO, 4), (BTIO, 8), (READ, 4), (READ, 8), (WRITE, 4), (WRITE, 8)])

    def test_plain_and_client_cross_the_link_in_the_emulator(self):
        for mode in ("plain", "client"):
            command = list(self.run_of(WRITE, 4, mode).command)
            self.assertEqual(command[0], "/b/stagio-emu")
            link = command.index("--link-latency-ms")
            self.assertEqual(command[link:link + 4],
                             ["--link-latency-ms", "1", "--link-bandwidth-mbps", "400"])

    def test_client_makes_every_rank_an_aggregator(self):
        command = self.run_of(BTIO, 8, "client").command
        self.assertIn("STAGIO_AGGREGATORS=8", command)
        self.assertNotIn("STAGIO_IOND", " ".join(command))

    def test_iond_runs_through_the_wrapper(self):
        run = self.run_of(WRITE, 4, "iond")
        command = list(run.command)
        self.assertTrue(command[1].endswith("with_iond.py"))
        args = with_iond.parse_args(command[2:])
        self.assertEqual((args.iond, args.link, args.iond_stats),
                         ("/b/stagio-iond", "/b/stagio-link", run.emulator_stats))
        self.assertEqual((args.link_latency_ms, args.link_bandwidth_mbps), ("1", "400"))
        self.assertEqual(args.iond_arg, ["--cache-size", "512M"])
        # The app itself runs under its own emulator (its direct requests), with the link.
        self.assertEqual(args.command[0], "/b/stagio-emu")
        self.assertIn("--link-latency-ms", args.command)
        self.assertIn(f"STAGIO_IOND={with_iond.ADDRESS_TOKEN}", args.command)
        self.assertEqual(args.app_emu_stats, args.command[args.command.index("--stats") + 1])

    def test_the_sweeps_daemon_gets_the_points_options(self):
        config = _iond_config(workloads=[workloads.workload_by_name(SWEEP.workloads[0])],
                              modes=[modes.mode_by_name("iond-wb-c0-d100")], rank_counts=(4,),
                              iond_args=())
        [run] = plan.plan_runs(config, ARTIFACTS)
        args = with_iond.parse_args(list(run.command)[2:])
        self.assertEqual(args.iond_arg, ["--write-back-high", "100", "--write-back-low", "50",
                                         "--cache-size", "512M"])

    def test_preflight_names_a_missing_daemon(self):
        with tempfile.TemporaryDirectory() as build:
            problems = bench_config.missing_pieces(
                _iond_config(build_dir=build), bench_config.Artifacts.in_build(build, "mpich"))
        daemon = [p for p in problems if "stagio-iond" in p]
        self.assertEqual(len(daemon), 1)
        self.assertIn("--modes plain,client", daemon[0])
        self.assertTrue(any("stagio-link" in p for p in problems))

    def test_plain_and_client_alone_need_no_daemon(self):
        config = _iond_config(modes=[modes.mode_by_name(n) for n in ("plain", "client")])
        problems = bench_config.missing_pieces(config, ARTIFACTS)
        self.assertFalse(any("stagio-iond" in p or "stagio-link" in p for p in problems))


class WrapperTest(unittest.TestCase):
    def args(self, *more):
        return with_iond.parse_args(["--emulator", "E", "--iond", "D", "--link", "L",
                                     "--data-dir", "/d", "--scratch", "/s/run", *more,
                                     "--", "mpiexec", "env", "STAGIO_IOND=@IOND@", "app"])

    def test_the_address_replaces_the_token(self):
        self.assertEqual(with_iond.substitute_address(["a", "X=@IOND@"], "127.0.0.1:9"),
                         ["a", "X=127.0.0.1:9"])

    def test_the_daemon_runs_under_the_device_alone(self):
        args = self.args("--iond-stats", "/s/e.json", "--iond-arg=--cache-size",
                         "--iond-arg=64M")
        command = with_iond.daemon_command(args, "/s/ready")
        self.assertEqual(command[0], "E")
        self.assertNotIn("--link-latency-ms", command)
        self.assertEqual(command[command.index("--"):], [
            "--", "D", "--listen", "127.0.0.1:0", "--root", "/d", "--ready-file", "/s/ready",
            "--stats", "/s/run.iond-stats.json", "--cache-size", "64M"])
        self.assertEqual(args.command[-1], "app")

    def test_the_relay_gets_the_link(self):
        args = self.args("--link-latency-ms", "1", "--link-bandwidth-mbps", "50")
        self.assertEqual(with_iond.relay_command(args, "127.0.0.1:5", "/r", "/st"), [
            "L", "--listen", "127.0.0.1:0", "--to", "127.0.0.1:5", "--latency-ms", "1",
            "--bandwidth-mbps", "50", "--ready-file", "/r", "--stats", "/st"])

    def test_a_daemon_that_never_listens_fails_the_run_with_its_log(self):
        with tempfile.TemporaryDirectory() as scratch:
            args = with_iond.parse_args([
                "--emulator", sys.executable, "--iond", "x", "--link", "y", "--data-dir",
                scratch, "--scratch", os.path.join(scratch, "run"), "--", "true"])
            # `python3 --dir ...` exits at once with a usage error: the daemon "died".
            out = io.StringIO()
            with redirect_stdout(out), open(os.devnull, "w") as quiet:
                saved, sys.stderr = sys.stderr, quiet
                try:
                    status = with_iond.run(args)
                finally:
                    sys.stderr = saved
        self.assertEqual(status, with_iond.FAILED_DAEMON)
        line = resultline.parse_iond_line(out.getvalue())
        self.assertIn("exited with status", line["error"])

    def test_the_run_line_is_parsed(self):
        stdout = 'x\nSTAGIO_IOND_RUN {"iond_exit": 0, "iond_shutdown_s": 0.5}\n'
        self.assertEqual(resultline.parse_iond_line(stdout)["iond_shutdown_s"], 0.5)
        self.assertIsNone(resultline.parse_iond_line("STAGIO_IOND_RUN [1]\n"))
        self.assertIsNone(resultline.parse_iond_line(""))


def _iond_run(workload, mode, rep, io_s, ranks=4, moved=4 * 2**20, shutdown=None):
    run = make_run(workload, mode, rep, 10.0 + io_s, ranks=ranks)
    written = 0 if workload == READ else moved
    run["result"] = dict(RESULT, elapsed_s=10.0 + io_s, io_s=io_s, bytes_written=written,
                         bytes_read=moved - written, ranks=ranks)
    if shutdown is not None:
        run["iond"] = {"iond_exit": 0, "iond_shutdown_s": shutdown,
                       "app_direct": {"requests": 0}}
    return run


def _results(link=IOND.link, io=None):
    """plain 1 s of I/O per run; client and iond as `io` says ({mode: seconds})."""
    io = io or {"client": 0.3, "iond": 0.2}
    runs = []
    for workload, ranks in ((WRITE, 4), (READ, 4), (BTIO, 4), (BTIO, 8)):
        for rep in (1, 2, 3):
            runs.append(_iond_run(workload, "plain", rep, 1.0, ranks))
            runs.append(_iond_run(workload, "client", rep, io["client"], ranks))
            runs.append(_iond_run(workload, "iond", rep, io["iond"], ranks, shutdown=0.1))
    settings = {"suite": "iond", "workloads": list(IOND.workloads), "modes": list(IOND.modes),
                "ranks": [4, 8], "reps": 3}
    return {"settings": settings, "link": {"latency_ms": 1.0, "bandwidth_mbps":
                                           link.bandwidth_mbps},
            "emulator": {"latency_ms": 5.0, "bandwidth_mbps": 200.0, "parallel": 8},
            "runs": runs, "summary": summary.summarize(runs, settings["workloads"], [4, 8],
                                                       settings["modes"])}


class TargetsTest(unittest.TestCase):
    def verdicts(self, results):
        return targets.evaluate(results["summary"], results["settings"]["workloads"], [4, 8],
                                results["link"], results["emulator"])

    def test_throughput_is_bytes_over_io_time(self):
        self.assertAlmostEqual(metrics.io_throughput_mbps(
            {"bytes_read": 0, "bytes_written": 4e6, "io_s": 2.0}), 2.0)
        self.assertIsNone(metrics.io_throughput_mbps({"bytes_read": 0, "bytes_written": 1,
                                                      "io_s": 0}))

    def test_only_cases_that_ran_count(self):
        results = _results()
        self.assertEqual(targets.cases(results["summary"], IOND.workloads, [4, 8]),
                         [(WRITE, 4), (READ, 4), (BTIO, 4), (BTIO, 8)])

    def test_gains_met_and_the_tier_not_judged_without_a_bottleneck(self):
        writes, reads, tier = self.verdicts(_results())
        self.assertTrue(writes.met)   # 5x plain
        self.assertIn("iond 5.0x (client alone 3.3x)", writes.measured)
        self.assertFalse(reads.met)   # 5x < 8x
        self.assertIsNone(tier.met)
        self.assertIn("--link-bottleneck", tier.measured)

    def test_the_second_tier_is_judged_on_a_bottleneck_link(self):
        _, _, tier = self.verdicts(_results(link=IOND.bottleneck_link))
        self.assertTrue(tier.met)     # 0.3 / 0.2 = 1.5x
        _, _, tier = self.verdicts(_results(link=IOND.bottleneck_link,
                                            io={"client": 0.2, "iond": 0.2}))
        self.assertFalse(tier.met)

    def test_nothing_measured_is_not_judged(self):
        verdicts = targets.evaluate({}, list(IOND.workloads), [4], None, None)
        self.assertEqual([v.met for v in verdicts], [None, None, None])


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.text = report.render_markdown(_results())

    def test_shows_targets_cases_and_the_daemons_shutdown(self):
        self.assertIn("## Targets (issue 6)", self.text)
        self.assertIn("| 8 | iond | 10.200 | 0.200 | 21.0 | 5.00 | n/a | 0.100 | 0 |", self.text)
        self.assertNotIn(f"| 8 | plain", self.text.split(f"## {WRITE}")[1].split("##")[0])

    def test_tables_are_well_formed(self):
        self.assertEqual(table_shape_errors(self.text), [])

    def test_the_sweep_report_has_both_grids(self):
        runs = [_iond_run(SWEEP.workloads[0], m, 1, 0.5) for m in ("plain", "iond-wb-c0-d0",
                                                                    "iond-cache-c8M-d64M")]
        settings = {"suite": "iond-sweep", "workloads": list(SWEEP.workloads),
                    "modes": list(SWEEP.modes), "ranks": [4], "reps": 1}
        text = report.render_markdown({"settings": settings, "runs": runs, "summary":
                                       summary.summarize(runs, settings["workloads"], [4],
                                                         settings["modes"])})
        self.assertIn("| 0% | 8.4 | n/a | n/a | n/a |", text)
        self.assertIn("| 8M | n/a | 8.4 | n/a | n/a |", text)
        self.assertIn("- `plain`: 8.4 MB/s", text)
        self.assertEqual(table_shape_errors(text), [])


@unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed")
class PlotsTest(unittest.TestCase):
    def test_draws_the_suites_and_the_sweeps_plots(self):
        with tempfile.TemporaryDirectory() as out:
            paths, warning = plots.write_plots(_results(), None, out)
            self.assertIsNone(warning)
            self.assertEqual(png_names(paths), ["throughput.png"])
            sweep = {"settings": {"suite": "iond-sweep", "workloads": list(SWEEP.workloads),
                                  "modes": list(SWEEP.modes), "ranks": [4]}, "summary": {}}
            paths, warning = plots.write_plots(sweep, None, out)
            self.assertEqual(png_names(paths), ["sweep_caches.png", "sweep_marks.png"])


if __name__ == "__main__":
    unittest.main()
