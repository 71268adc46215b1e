"""Unit tests of the collective suite's parts of `stagio bench`: suites, rank counts on the
command line and in the plan, the summary over rank counts, issue 4's targets, the scaling
report and its plots. No MPI, no emulator; the plots only where matplotlib is installed.
"""

import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stagio_tools import bench_cli  # noqa: E402
from stagio_tools import bench_config  # noqa: E402
from stagio_tools import cli  # noqa: E402
from stagio_tools import collective_targets as targets  # noqa: E402
from stagio_tools import launch  # noqa: E402
from stagio_tools import metrics  # noqa: E402
from stagio_tools import modes  # noqa: E402
from stagio_tools import plan  # noqa: E402
from stagio_tools import plots  # noqa: E402
from stagio_tools import report  # noqa: E402
from stagio_tools import results_view  # noqa: E402
from stagio_tools import stats  # noqa: E402
from stagio_tools import suites  # noqa: E402
from stagio_tools import summary  # noqa: E402
from stagio_tools import workloads  # noqa: E402

from fixtures import make_run, png_names, table_shape_errors  # noqa: E402

COLLECTIVE = suites.suite_by_name("collective")
IND, COLL = targets.INDIVIDUAL, targets.COLLECTIVE


class SuiteTableTest(unittest.TestCase):
    def test_every_suite_names_known_workloads_and_modes(self):
        for suite in suites.SUITES:
            with self.subTest(suite.name):
                for name in suite.workloads:
                    workloads.workload_by_name(name)
                for name in suite.modes:
                    modes.mode_by_name(name)
                self.assertIn(suite.report, (suites.PER_MODE, suites.SCALING, suites.PREEXEC,
                                             suites.IOND, suites.IOND_SWEEP, suites.SEGSTORE,
                                             suites.SLICE))

    def test_the_collective_suite(self):
        self.assertEqual(COLLECTIVE.workloads, ("coll-strided-1m", "coll-strided-4m",
                                                "coll-nested", "tile-overlap"))
        self.assertEqual(COLLECTIVE.modes, ("ideal", "plain", IND, COLL))
        self.assertEqual(COLLECTIVE.rank_counts, (2, 4, 8, 16))
        self.assertEqual(set(targets.STRIDED) | {targets.TILE}, set(COLLECTIVE.workloads))

    def test_the_node_suite_compares_every_way_to_cache_shared_blocks(self):
        node = suites.suite_by_name("node")
        self.assertEqual(node.workloads, ("shared-interleaved",))
        self.assertEqual(set(node.modes) - {"ideal", "plain"},
                         {"stagio-per-rank", IND, COLL, "stagio-prefetch"})
        # The device is the bottleneck: 2 ms of compute per 64 KiB record and rank, against
        # 1.6 ms of device time for it at 40 MB/s.
        self.assertEqual(node.device.bandwidth_mbps, 40.0)
        shared = workloads.workload_by_name("shared-interleaved")
        self.assertLess(shared.compute_ms, 2 * 64 * 1024 / (node.device.bandwidth_mbps * 1e3))
        per_rank = dict(modes.mode_by_name("stagio-per-rank").settings)
        self.assertEqual(per_rank, {"STAGIO_NODE_CACHE": "disable",
                                    "STAGIO_COLLECTIVE_CACHE": "disable"})

    def test_its_workloads_read_collectively(self):
        for name in COLLECTIVE.workloads:
            with self.subTest(name):
                self.assertIn("--collective", workloads.workload_by_name(name).parameters(False))

    def test_tile_workload(self):
        tile = workloads.workload_by_name("tile-overlap")
        self.assertEqual(tile.program, "bench_tileio")
        self.assertEqual(tile.count_option, "--frames")

    def test_rank_counts_of_old_and_new_settings(self):
        self.assertEqual(results_view.rank_counts_of({"ranks": 4}), [4])
        self.assertEqual(results_view.rank_counts_of({"ranks": [2, 16]}), [2, 16])
        self.assertEqual(results_view.rank_counts_of({}), [])

    def test_suite_of_results(self):
        self.assertEqual(suites.suite_of({}).name, "default")
        self.assertEqual(suites.suite_of({"settings": {"suite": "collective"}}).name,
                         "collective")
        self.assertEqual(suites.suite_of({"settings": {"suite": "gone"}}).name, "default")


class CollectiveCliTest(unittest.TestCase):
    def config(self, *argv):
        return bench_cli.make_config(cli.build_parser().parse_args(["bench", *argv]))

    def test_the_suite_fills_in_workloads_modes_and_rank_counts(self):
        config = self.config("--suite", "collective")
        self.assertEqual([w.name for w in config.workloads], list(COLLECTIVE.workloads))
        self.assertEqual([m.name for m in config.modes], list(COLLECTIVE.modes))
        self.assertEqual(config.rank_counts, (2, 4, 8, 16))
        self.assertEqual(config.suite, "collective")
        self.assertEqual(config.input_ranks, 16)

    def test_quick_runs_the_small_rank_counts(self):
        self.assertEqual(self.config("--suite", "collective", "--quick").rank_counts, (2, 4))

    def test_the_command_line_overrides_the_suite(self):
        config = self.config("--suite", "collective", "--ranks-list", "8,2,8", "--modes",
                             "stagio-collective,plain", "tile-overlap")
        self.assertEqual(config.rank_counts, (8, 2))
        self.assertEqual([m.name for m in config.modes], ["plain", COLL])
        self.assertEqual([w.name for w in config.workloads], ["tile-overlap"])
        self.assertEqual(self.config("--suite", "collective", "--ranks", "4").rank_counts, (4,))

    def test_all_means_the_suites_workloads(self):
        self.assertEqual(len(self.config("--suite", "collective", "all").workloads), 4)
        self.assertEqual(len(self.config("all").workloads), 9)

    def test_bad_rank_lists_are_refused(self):
        for text in ("", "a", "2,-4", "0"):
            with self.subTest(text), self.assertRaises(SystemExit), \
                    contextlib.redirect_stderr(io.StringIO()):
                self.config("--suite", "collective", "--ranks-list", text)


ARTIFACTS = bench_config.Artifacts("/b/libstagio.so", "/b/libstagio_emu.so", "/b/stagio-emu",
                                   "mpiexec.mpich")


def _collective_config(**overrides):
    values = dict(workloads=[workloads.workload_by_name(n) for n in COLLECTIVE.workloads],
                  modes=[modes.mode_by_name(n) for n in COLLECTIVE.modes], reps=2,
                  rank_counts=(2, 16), mpi="openmpi", build_dir="/b", out_dir="/o",
                  work_dir="/w", device=launch.Device(), suite="collective")
    values.update(overrides)
    return bench_config.BenchConfig(**values)


class RankCountPlanTest(unittest.TestCase):
    def setUp(self):
        self.planned = plan.plan_runs(_collective_config(), ARTIFACTS)

    def test_rank_counts_are_interleaved_inside_each_rep(self):
        self.assertEqual(len(self.planned), 2 * 2 * 4 * 4)
        order = [(p.rep, p.ranks, p.workload.name, p.mode.name) for p in self.planned]
        self.assertEqual(order[0], (1, 2, "coll-strided-1m", "ideal"))
        self.assertEqual(order[16], (1, 16, "coll-strided-1m", "ideal"))
        self.assertEqual(order[32], (2, 2, "coll-strided-1m", "stagio-collective"))
        self.assertEqual(order[35], (2, 2, "coll-strided-1m", "ideal"))

    def test_each_run_launches_its_rank_count(self):
        for item in self.planned:
            launcher = item.command.index("mpirun.openmpi")
            self.assertEqual(item.command[launcher + 3], str(item.ranks))

    def test_all_rank_counts_read_the_input_made_for_the_largest(self):
        tile = workloads.workload_by_name("tile-overlap")
        inputs = {p.command[p.command.index("--file") + 1] for p in self.planned
                  if p.workload is tile}
        self.assertEqual(inputs, {workloads.input_path("/w/data", tile, False, 16)})
        command = plan.create_input_command(_collective_config(), tile)
        self.assertEqual(command[-2:], ["--ranks", "16"])

    def test_stats_files_differ_per_rank_count(self):
        paths = [p.stagio_stats for p in self.planned if p.stagio_stats]
        self.assertEqual(len(paths), len(set(paths)))
        self.assertIn("/w/scratch/tile-overlap.16.stagio-collective.2.stagio.json", paths)

    def test_collective_modes_set_their_prefetching_and_the_collective_cache(self):
        item = next(p for p in self.planned if p.mode.name == COLL)
        self.assertIn("STAGIO_PREFETCH=collective", item.command)
        self.assertIn("STAGIO_COLLECTIVE_CACHE=enable", item.command)


def _emulator(requests, bytes_read):
    return {"requests": requests, "read_requests": requests, "write_requests": 0,
            "bytes_read": bytes_read, "bytes_written": 0}


def _counters(**values):
    return dict(dict.fromkeys(stats.STAGIO_COUNTERS, 0), **values)


# Per (workload, ranks): times of ideal, plain, individual, collective; requests of plain,
# individual, collective; the collective mode's prefetch_redundant.
CASES = {
    ("coll-strided-1m", 4): ((1.0, 3.0, 2.0, 1.2), (400, 400, 50), 0),
    ("coll-strided-1m", 16): ((1.0, 6.0, 5.0, 2.0), (1600, 1600, 100), 0),
    ("tile-overlap", 4): ((1.0, 2.0, 1.5, 1.25), (64, 300, 64), 12),
    ("tile-overlap", 16): ((1.0, 2.0, 1.5, 1.6), (64, 900, 64), 30),
}


def _scaling_results():
    runs = []
    for (workload, ranks), (times, requests, redundant) in CASES.items():
        for rep in (1, 2):
            runs.append(make_run(workload, "ideal", rep, times[0], ranks=ranks))
            runs.append(make_run(workload, "plain", rep, times[1], ranks=ranks,
                                 emulator=_emulator(requests[0], requests[0] * 2**20)))
            runs.append(make_run(workload, IND, rep, times[2], ranks=ranks,
                                 stagio_stats=_counters(prefetch_issued=10),
                                 emulator=_emulator(requests[1], requests[1] * 2**20)))
            runs.append(make_run(workload, COLL, rep, times[3], ranks=ranks,
                                 stagio_stats=_counters(prefetch_issued=8,
                                                        prefetch_redundant=redundant,
                                                        exchanged_bytes=3 * 2**20),
                                 emulator=_emulator(requests[2], requests[2] * 2**22)))
    runs.append(make_run("tile-overlap", COLL, 3, 0.0, ok=False, ranks=16))
    names, counts = ["coll-strided-1m", "tile-overlap"], [4, 16]
    settings = {"suite": "collective", "workloads": names, "modes": list(COLLECTIVE.modes),
                "ranks": counts, "reps": 2, "mpi": "openmpi", "quick": False}
    return {"command_line": "tools/stagio bench --suite collective", "settings": settings,
            "emulator": {"latency_ms": 5.0, "bandwidth_mbps": 200.0, "parallel": 8},
            "runs": runs,
            "failures": [{"workload": "tile-overlap", "ranks": 16, "mode": COLL, "rep": 3,
                          "error": "exit status 1"}],
            "summary": summary.summarize(runs, names, counts, list(COLLECTIVE.modes))}


class ScalingSummaryTest(unittest.TestCase):
    def setUp(self):
        self.summary = _scaling_results()["summary"]

    def test_cases_are_kept_apart_by_rank_count(self):
        self.assertAlmostEqual(summary.entry(self.summary, "coll-strided-1m", 4, "plain")
                               ["median_s"], 3.0)
        self.assertAlmostEqual(summary.entry(self.summary, "coll-strided-1m", 16, "plain")
                               ["median_s"], 6.0)
        self.assertEqual(summary.entry(self.summary, "coll-strided-1m", 8, "plain"), {})

    def test_speedup_and_request_size(self):
        entry = summary.entry(self.summary, "coll-strided-1m", 16, COLL)
        self.assertAlmostEqual(entry["speedup"], 3.0)
        self.assertEqual(entry["emulator_requests"], 100)
        self.assertEqual(entry["mean_request_bytes"], 2**22)
        self.assertEqual(entry["stagio"]["exchanged_bytes"], 2 * 3 * 2**20)

    def test_failed_runs_are_counted(self):
        self.assertEqual(summary.entry(self.summary, "tile-overlap", 16, COLL)["failed"], 1)


class SpeedupBoundTest(unittest.TestCase):
    def test_compute_or_the_device_bounds_the_gain(self):
        self.assertAlmostEqual(metrics.speedup_bound(6.0, 2.0, 1.0), 3.0)  # compute-bound
        self.assertAlmostEqual(metrics.speedup_bound(6.0, 2.0, 4.0), 1.5)  # device-bound
        self.assertAlmostEqual(metrics.speedup_bound(6.0, 2.0, None), 3.0)
        self.assertIsNone(metrics.speedup_bound(6.0, None, None))

    def test_transfer_seconds_from_the_emulators_bandwidth(self):
        emulator = dict(_emulator(4, 300 * 10**6), params={"bandwidth_mbps": 200.0})
        self.assertAlmostEqual(stats.transfer_seconds(emulator), 1.5)
        self.assertIsNone(stats.transfer_seconds(_emulator(4, 100)))  # no params
        self.assertIsNone(stats.transfer_seconds(None))

    def test_the_summary_bounds_plain_by_its_transfer_time(self):
        emulator = dict(_emulator(4, 800 * 10**6), params={"bandwidth_mbps": 200.0})
        runs = [make_run("w", "ideal", 1, 2.0), make_run("w", "plain", 1, 8.0, emulator=emulator)]
        plain = summary.summarize(runs, ["w"], [4], ["ideal", "plain"])["w"]["4"]["plain"]
        self.assertAlmostEqual(plain["transfer_s"], 4.0)
        self.assertAlmostEqual(plain["speedup_bound"], 2.0)


class MeanRequestBytesTest(unittest.TestCase):
    def test_weighted_over_runs_and_reads_and_writes(self):
        runs = [dict(_emulator(1, 100), write_requests=1, bytes_written=300), _emulator(2, 200)]
        self.assertAlmostEqual(stats.mean_request_bytes(runs), 600 / 4)

    def test_missing_counters_or_requests_give_none(self):
        self.assertIsNone(stats.mean_request_bytes([]))
        self.assertIsNone(stats.mean_request_bytes([{"requests": 3}]))
        self.assertIsNone(stats.mean_request_bytes([_emulator(0, 0)]))


class TargetsTest(unittest.TestCase):
    def verdicts(self, results=None):
        results = results or _scaling_results()
        settings = results["settings"]
        return targets.evaluate(results["summary"], settings["workloads"], settings["ranks"])

    def test_speedup_ratio_averages_the_strided_cases(self):
        verdict = self.verdicts()[0]
        # Collective: 3.0/1.2 = 2.5 and 6.0/2.0 = 3.0; individual: 1.5 and 1.2.
        self.assertIn("mean speed-up 2.75 (collective) vs 1.35 (individual) over 2 cases: "
                      "2.04×", verdict.measured)
        self.assertTrue(verdict.met)

    def test_no_drop_from_4_to_16_ranks_on_any_workload(self):
        verdict = self.verdicts()[1]
        self.assertIn("coll-strided-1m 2.50 → 3.00", verdict.measured)
        self.assertIn("tile-overlap 1.60 → 1.25", verdict.measured)
        self.assertFalse(verdict.met)

    def test_requests_in_every_strided_case(self):
        verdict = self.verdicts()[2]
        self.assertIn("lowest 8.00× (coll-strided-1m at 4 ranks)", verdict.measured)
        self.assertTrue(verdict.met)

    def test_redundancy_on_the_tile_workload(self):
        verdict = self.verdicts()[3]
        self.assertEqual(verdict.measured,
                         "prefetch_redundant summed over the runs: 4 ranks: 24, 16 ranks: 60")
        self.assertTrue(verdict.met)

    def test_nothing_measured_is_not_judged(self):
        verdicts = targets.evaluate({}, ["coll-strided-1m", "tile-overlap"], [2])
        self.assertEqual([v.met for v in verdicts], [None] * 4)
        self.assertIn("needs runs at 4 and 16 ranks", verdicts[1].measured)

    def test_counters_stagio_does_not_report_are_not_judged(self):
        results = _scaling_results()
        for run in results["runs"]:
            if run.get("stagio_stats"):
                run["stagio_stats"] = dict(run["stagio_stats"], prefetch_redundant=None)
        settings = results["settings"]
        results["summary"] = summary.summarize(results["runs"], settings["workloads"],
                                               settings["ranks"], settings["modes"])
        self.assertIsNone(self.verdicts(results)[3].met)


class ScalingReportTest(unittest.TestCase):
    def setUp(self):
        self.text = report.render_markdown(_scaling_results())

    def test_is_the_scaling_report_with_the_targets(self):
        self.assertIn("# stagio bench results: scaling with the rank count", self.text)
        self.assertIn("## Targets (issue 4)", self.text)
        self.assertIn("| no drop in collective speed-up from 4 to 16 ranks | coll-strided-1m "
                      "2.50 → 3.00; tile-overlap 1.60 → 1.25 | **not met** |", self.text)

    def test_speedup_rows(self):
        self.assertIn("| ranks | T ideal | T plain | T stagio-individual | T stagio-collective "
                      "| bound | speed-up stagio-individual | speed-up stagio-collective | "
                      "collective / individual |", self.text)
        self.assertIn("| 16 | 1.000 | 6.000 | 5.000 | 2.000 | 6.00 | 1.20 | 3.00 | 2.50 |",
                      self.text)
        self.assertIn("| 16 | 1.000 | 2.000 | 1.500 | 1.600 (1 failed) | 2.00 | 1.33 | 1.25 "
                      "| 0.94 |", self.text)

    def test_storage_rows(self):
        self.assertIn("| 4 | plain | 400 | 1.00 MiB | n/a | n/a | n/a | n/a |", self.text)
        self.assertIn("| 16 | stagio-collective | 100 | 4.00 MiB | 8 | 0 | 3.00 MiB | 0 |",
                      self.text)
        self.assertIn("| 4 | stagio-collective | 64 | 4.00 MiB | 8 | 12 | 3.00 MiB | 0 |",
                      self.text)

    def test_failures_name_the_rank_count(self):
        self.assertIn("- tile-overlap 16 ranks stagio-collective rep 3: exit status 1",
                      self.text)

    def test_tables_are_well_formed(self):
        self.assertEqual(table_shape_errors(self.text), [])

    def test_renders_with_nothing_measured(self):
        text = report.render_markdown({"settings": {"suite": "collective"}})
        self.assertIn("not judged", text)


@unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed")
class ScalingPlotsTest(unittest.TestCase):
    def test_draws_speedup_and_requests_even_with_missing_numbers(self):
        results = _scaling_results()
        results["settings"]["ranks"] = [2, 4, 16]  # nothing measured at 2
        with tempfile.TemporaryDirectory() as out:
            paths, warning = plots.write_plots(results, None, out)
            self.assertIsNone(warning)
            self.assertEqual(png_names(paths), ["requests.png", "speedup.png"])


if __name__ == "__main__":
    unittest.main()
