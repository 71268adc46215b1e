"""Unit tests of the segstore suite of `stagio bench`: its workloads, modes and device, how a
run with a segment store is put together (the seek, --segstore), the counters' summary, the
targets, the report and the plot. No MPI, no daemon; the plot only where matplotlib is
installed.
"""

import importlib.util
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stagio_tools import bench_cli  # noqa: E402
from stagio_tools import bench_config  # noqa: E402
from stagio_tools import cli  # noqa: E402
from stagio_tools import plan  # noqa: E402
from stagio_tools import plots  # noqa: E402
from stagio_tools import report  # noqa: E402
from stagio_tools import segstore_targets as targets  # noqa: E402
from stagio_tools import suites  # noqa: E402
from stagio_tools import summary  # noqa: E402
from stagio_tools import with_iond  # noqa: E402
from stagio_tools import workloads  # noqa: E402

from fixtures import RESULT, make_run, png_names, table_shape_errors  # noqa: E402

SEGSTORE = suites.suite_by_name("segstore")
ZOOM, TILES, SCAN = "viewer-zoom", "viewer-tiles", "viewer-scan"
ARTIFACTS = bench_config.Artifacts.in_build("/b", "mpich")


def config_of(*argv):
    return bench_cli.make_config(cli.build_parser().parse_args(["bench", *argv]))


class SuiteTest(unittest.TestCase):
    def test_the_suite(self):
        self.assertEqual(SEGSTORE.workloads, (ZOOM, TILES, SCAN))
        self.assertEqual(SEGSTORE.modes, ("plain", "stagio-iond", "stagio-segstore"))
        self.assertEqual(SEGSTORE.report, suites.SEGSTORE)
        self.assertEqual(SEGSTORE.device.seek_ms, 4.0)

    def test_the_pauses_outlast_the_default_idle_threshold(self):
        # The store groups after 5 s without requests, checked once a second.
        for name in (ZOOM, TILES):
            self.assertGreater(workloads.workload_by_name(name).compute_ms, 6000)
        self.assertEqual(workloads.workload_by_name(SCAN).compute_ms, 0)

    def test_the_store_mode_alone_gets_a_segment_store_and_every_run_the_seek(self):
        config = config_of("--suite", "segstore")
        runs = plan.plan_runs(config, ARTIFACTS)
        self.assertEqual(len(runs), 3 * 3 * 3)
        for run in runs:
            with self.subTest(f"{run.workload.name} {run.mode.name}"):
                command = list(run.command)
                self.assertIn("4", [command[i + 1] for i, c in enumerate(command)
                                    if c == "--seek-ms"])
                self.assertEqual("--segstore" in command, run.mode.name == "stagio-segstore")
                if run.mode.iond:
                    self.assertIn("--iond-arg=16M", command)

    def test_with_iond_gives_the_daemon_a_directory_of_its_own(self):
        args = with_iond.parse_args(["--emulator", "e", "--iond", "d", "--link", "l",
                                     "--data-dir", "/data", "--scratch", "/s/run",
                                     "--seek-ms", "4", "--segstore", "--", "prog"])
        command = with_iond.daemon_command(args, "/s/ready")
        self.assertEqual(command[command.index("--seek-ms") + 1], "4")
        self.assertEqual(command[command.index("--segstore") + 1], "/s/run.segments")
        args = with_iond.parse_args(["--emulator", "e", "--iond", "d", "--link", "l",
                                     "--data-dir", "/data", "--scratch", "/s/run", "--", "p"])
        command = with_iond.daemon_command(args, "/s/ready")
        self.assertNotIn("--segstore", command)
        self.assertNotIn("--seek-ms", command)


def _store(reads, hits, after, hits_after, written=4):
    return {"reads": reads, "read_hits": hits, "reads_after_first_group": after,
            "read_hits_after_first_group": hits_after, "bytes_from_segments": hits * 100,
            "bytes_from_storage": (reads - hits) * 100, "segments_written": written,
            "grouping_runs": 2, "grouping_yields": 0, "segments_held": 4,
            "segment_size": 16 << 20, "location": "/s"}


def _run(workload, mode, rep, io_s, store=None):
    run = make_run(workload, mode, rep, 40.0 + io_s)
    run["result"] = dict(RESULT, elapsed_s=40.0 + io_s, io_s=io_s, bytes_read=96 * 2**20,
                         bytes_written=0, timings={"pass_io_s": [io_s / 2, io_s / 4, io_s / 4]})
    if mode != "plain":
        run["iond"] = {"iond_exit": 0, "iond_shutdown_s": 0.1, "app_direct": {"requests": 0},
                       "daemon": {"segment_store": store} if store else {}}
    return run


def _results(store_io=0.4, scan=(1.0, 1.01), hits_after=90):
    runs = []
    for rep in (1, 2):
        for workload in (ZOOM, TILES):
            runs.append(_run(workload, "plain", rep, 1.2))
            runs.append(_run(workload, "stagio-iond", rep, 1.3))
            runs.append(_run(workload, "stagio-segstore", rep, store_io,
                             _store(200, 90, 100, hits_after)))
        runs.append(_run(SCAN, "plain", rep, 0.9))
        runs.append(_run(SCAN, "stagio-iond", rep, scan[0]))
        runs.append(_run(SCAN, "stagio-segstore", rep, scan[1], _store(64, 0, 0, 0, 0)))
    settings = {"suite": "segstore", "workloads": list(SEGSTORE.workloads),
                "modes": list(SEGSTORE.modes), "ranks": [4], "reps": 2}
    return {"settings": settings,
            "emulator": {"latency_ms": 5.0, "bandwidth_mbps": 200.0, "parallel": 8,
                         "seek_ms": 4.0},
            "runs": runs, "summary": summary.summarize(runs, settings["workloads"], [4],
                                                       settings["modes"])}


class SummaryTest(unittest.TestCase):
    def test_counters_are_summed_and_rates_made_from_the_sums(self):
        store = summary.segment_store_counters([_store(200, 90, 100, 90), _store(100, 0, 0, 0)])
        self.assertEqual(store["reads"], 300)
        self.assertAlmostEqual(store["group_hit_rate"], 0.3)
        self.assertAlmostEqual(store["group_hit_rate_after_first_group"], 0.9)
        self.assertNotIn("segments_held", store)  # state, not a counter
        self.assertIsNone(summary.segment_store_counters([_store(1, 1, 1, 1), None]))


class TargetsTest(unittest.TestCase):
    def verdicts(self, results):
        return targets.evaluate(results["summary"], results["settings"]["workloads"], [4])

    def test_met(self):
        bandwidth, hits, scan = self.verdicts(_results())
        self.assertTrue(bandwidth.met)  # 1.2 / 0.4 = 3x
        self.assertIn("viewer-zoom at 4 ranks: 3.00x", bandwidth.measured)
        self.assertTrue(hits.met)
        self.assertIn("90.0%", hits.measured)
        self.assertTrue(scan.met)
        self.assertIn("1.010x", scan.measured)

    def test_not_met(self):
        bandwidth, hits, scan = self.verdicts(_results(store_io=0.6, scan=(1.0, 1.05),
                                                       hits_after=80))
        self.assertFalse(bandwidth.met)  # 2x
        self.assertFalse(hits.met)
        self.assertFalse(scan.met)

    def test_nothing_measured_is_not_judged(self):
        self.assertEqual([v.met for v in targets.evaluate({}, [ZOOM, SCAN], [4])],
                         [None, None, None])


class ReportTest(unittest.TestCase):
    def test_targets_counters_and_well_formed_tables(self):
        text = report.render_markdown(_results())
        self.assertIn("## Targets (issue 16)", text)
        self.assertIn("4.0 ms seek per request", text)
        self.assertIn("| 4 | stagio-segstore | 40.400 | 0.400 | 251.7 | 3.00 | 3.25 | n/a | "
                      "90.0% | 18000 | 8 | 4 (0) |", text)
        self.assertIn("| stagio-segstore | 0.200 | 0.100 | 0.100 |", text)
        self.assertEqual(table_shape_errors(text), [])

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "needs matplotlib")
    def test_the_plot(self):
        with tempfile.TemporaryDirectory() as out:
            paths, warning = plots.write_plots(_results(), os.path.join(out, "results.json"),
                                               out)
            self.assertIsNone(warning)
            self.assertEqual(png_names(paths), ["throughput.png"])


if __name__ == "__main__":
    unittest.main()
