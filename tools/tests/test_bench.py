"""Unit tests of the pure parts of `stagio bench`: numbers, counters, result lines, commands,
the Markdown report. No MPI, no emulator, no matplotlib: run with
    python3 -m unittest discover -s tools/tests
"""

import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stagio_tools import bench_cli  # noqa: E402
from stagio_tools import bench_config  # noqa: E402
from stagio_tools import cli  # noqa: E402
from stagio_tools import launch  # noqa: E402
from stagio_tools import metrics  # noqa: E402
from stagio_tools import modes  # noqa: E402
from stagio_tools import plan  # noqa: E402
from stagio_tools import plots  # noqa: E402
from stagio_tools import progress  # noqa: E402
from stagio_tools import report  # noqa: E402
from stagio_tools import resultline  # noqa: E402
from stagio_tools import stats  # noqa: E402
from stagio_tools import suites  # noqa: E402
from stagio_tools import summary  # noqa: E402
from stagio_tools import workloads  # noqa: E402

from fixtures import RESULT, make_run as _run, png_names, table_shape_errors  # noqa: E402


class MetricsTest(unittest.TestCase):
    def test_median_of_odd_and_even_counts(self):
        self.assertEqual(metrics.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(metrics.median([4.0, 1.0, 3.0, 2.0]), 2.5)

    def test_median_ignores_missing_values_and_is_none_for_none(self):
        self.assertEqual(metrics.median([None, 5.0, None]), 5.0)
        self.assertIsNone(metrics.median([]))
        self.assertIsNone(metrics.median([None]))

    def test_median_is_robust_to_one_outlier(self):
        self.assertEqual(metrics.median([1.0, 1.1, 0.9, 1.0, 50.0]), 1.0)

    def test_spread(self):
        self.assertEqual(metrics.spread([2.0, 1.0, 5.0]), (2.0, 1.0, 5.0))
        self.assertEqual(metrics.spread([]), (None, None, None))

    def test_overlap_efficiency(self):
        # Plain 10 s, ideal 4 s: 6 s of I/O; a mode at 7 s hid half of it.
        self.assertAlmostEqual(metrics.overlap_efficiency(10.0, 7.0, 4.0), 0.5)
        self.assertAlmostEqual(metrics.overlap_efficiency(10.0, 4.0, 4.0), 1.0)
        self.assertAlmostEqual(metrics.overlap_efficiency(10.0, 10.0, 4.0), 0.0)

    def test_overlap_efficiency_is_negative_when_slower_than_plain(self):
        self.assertAlmostEqual(metrics.overlap_efficiency(10.0, 13.0, 4.0), -0.5)

    def test_overlap_efficiency_is_none_without_io_time_or_a_time(self):
        self.assertIsNone(metrics.overlap_efficiency(4.0, 3.0, 4.0))
        self.assertIsNone(metrics.overlap_efficiency(3.9, 3.0, 4.0))
        self.assertIsNone(metrics.overlap_efficiency(None, 3.0, 1.0))
        self.assertIsNone(metrics.overlap_efficiency(4.0, None, 1.0))
        self.assertIsNone(metrics.overlap_efficiency(4.0, 3.0, None))

    def test_ratio(self):
        self.assertAlmostEqual(metrics.ratio(1.0, 4.0), 0.25)
        self.assertIsNone(metrics.ratio(1.0, 0.0))
        self.assertIsNone(metrics.ratio(None, 1.0))


class StatsTest(unittest.TestCase):
    def test_accuracy_and_coverage(self):
        counters = {"prefetch_issued": 10, "prefetch_used": 8, "demand_fetches": 2}
        self.assertAlmostEqual(stats.prefetch_accuracy(counters), 0.8)
        self.assertAlmostEqual(stats.prefetch_coverage(counters), 0.8)

    def test_missing_counters_give_none(self):
        # Today's stagio has no prefetch counters at all.
        self.assertIsNone(stats.prefetch_accuracy({}))
        self.assertIsNone(stats.prefetch_coverage({}))
        self.assertIsNone(stats.prefetch_coverage({"prefetch_used": 3}))
        self.assertIsNone(stats.prefetch_coverage({"demand_fetches": 3}))
        self.assertIsNone(stats.prefetch_accuracy({"prefetch_used": 3, "prefetch_issued": None}))

    def test_nothing_issued_or_fetched_gives_none(self):
        self.assertIsNone(stats.prefetch_accuracy({"prefetch_issued": 0, "prefetch_used": 0}))
        self.assertIsNone(stats.prefetch_coverage({"prefetch_used": 0, "demand_fetches": 0}))

    def test_no_prefetching_has_zero_coverage(self):
        self.assertEqual(stats.prefetch_coverage({"prefetch_used": 0, "demand_fetches": 7}), 0.0)

    def test_stagio_summary_keeps_known_counters_and_marks_missing(self):
        document = {"ranks": 4, "total": {"cache_hits": 12, "cache_misses": 3,
                                          "calls": {"read_at": {"calls": 4, "bytes": 9}}}}
        summary_ = stats.stagio_summary(document)
        self.assertEqual(summary_["cache_hits"], 12)
        self.assertIsNone(summary_["prefetch_issued"])
        self.assertNotIn("calls", summary_)
        self.assertEqual(set(summary_), set(stats.STAGIO_COUNTERS))

    def test_stagio_summary_of_garbage_is_all_none(self):
        for document in (None, [], {"total": "x"}, {"total": {"cache_hits": "12"}}):
            self.assertIsNone(stats.stagio_summary(document)["cache_hits"])

    def test_emulator_summary(self):
        document = {"params": {"latency_ms": 5.0}, "requests": 40, "read_requests": 40}
        summary_ = stats.emulator_summary(document)
        self.assertEqual(summary_["requests"], 40)
        self.assertIsNone(summary_["charged_ns"])
        self.assertEqual(summary_["params"], {"latency_ms": 5.0})

    def test_sum_counters_is_none_when_one_run_lacks_the_counter(self):
        runs = [{"a": 1, "b": 2}, {"a": 3, "b": None}]
        self.assertEqual(stats.sum_counters(runs, ("a", "b", "c")),
                         {"a": 4, "b": None, "c": None})

    def test_load_json_file_reports_missing_and_torn_files(self):
        document, why = stats.load_json_file("/nonexistent/stats.json")
        self.assertIsNone(document)
        self.assertIn("not written", why)


class ResultLineTest(unittest.TestCase):
    def test_parses_the_line_among_other_output(self):
        stdout = ("stagio: 32 read calls\nSTAGIO_BENCH_RESULT " + json.dumps(RESULT) +
                  "\nstagio: stats written to x\n")
        self.assertEqual(resultline.parse_result_line(stdout), RESULT)

    def test_line_after_other_text_on_the_same_line(self):
        stdout = "partial outputSTAGIO_BENCH_RESULT " + json.dumps(RESULT)
        self.assertEqual(resultline.parse_result_line(stdout)["elapsed_s"], 1.25)

    def test_last_line_wins(self):
        later = dict(RESULT, elapsed_s=2.5)
        stdout = "\n".join("STAGIO_BENCH_RESULT " + json.dumps(r) for r in (RESULT, later))
        self.assertEqual(resultline.parse_result_line(stdout)["elapsed_s"], 2.5)

    def test_errors(self):
        cases = {
            "no line": "hello\n",
            "not JSON": "STAGIO_BENCH_RESULT {oops\n",
            "not an object": "STAGIO_BENCH_RESULT [1]\n",
            "lacks": "STAGIO_BENCH_RESULT " + json.dumps({"workload": "x"}),
            "elapsed_s is not a number": "STAGIO_BENCH_RESULT " + json.dumps(
                dict(RESULT, elapsed_s="1.0")),
        }
        for expected, stdout in cases.items():
            with self.subTest(expected), self.assertRaises(resultline.ResultLineError) as caught:
                resultline.parse_result_line(stdout)
            self.assertIn(expected.split()[0], str(caught.exception))


MODE_NAMES = list(suites.suite_by_name("default").modes)
COUNTERS = dict(dict.fromkeys(stats.STAGIO_COUNTERS, 0), demand_fetches=20)


def _fixed_results():
    """A small results dictionary as bench.py makes it: two workloads, one with a failure."""
    prefetch = dict(COUNTERS, prefetch_issued=10, prefetch_used=5, demand_fetches=15)
    runs = [
        _run("topk", "ideal", 1, 1.0), _run("topk", "ideal", 2, 1.2),
        _run("topk", "plain", 1, 3.0, requests=40), _run("topk", "plain", 2, 3.4, requests=42),
        _run("topk", "stagio", 1, 2.0, stagio_stats=COUNTERS, requests=10),
        _run("topk", "stagio", 2, 2.2, stagio_stats=COUNTERS, requests=10),
        _run("topk", "stagio-prefetch", 1, 1.5, stagio_stats=prefetch, requests=11),
        _run("topk", "stagio-prefetch", 2, 0.0, ok=False),
        _run("random", "ideal", 1, 1.0), _run("random", "plain", 1, 0.9),
        _run("random", "stagio", 1, 1.1, stagio_stats={}),
        _run("random", "stagio-prefetch", 1, 1.2, stagio_stats={}),
    ]
    settings = {"workloads": ["topk", "random"], "modes": MODE_NAMES, "reps": 2, "ranks": [4],
                "mpi": "mpich", "quick": False, "busy": False, "suite": "default"}
    return {
        "command_line": "tools/stagio bench --reps 2 topk random",
        "started_at": "2025-01-01T00:00:00+00:00", "duration_s": 42.0,
        "machine": {"hostname": "box", "nproc": 2, "mpi_version": "MPICH 4.0.2"},
        "emulator": {"latency_ms": 5.0, "bandwidth_mbps": 200.0, "parallel": 8},
        "settings": settings,
        "workloads": {"topk": {"description": "Top-k search.",
                               "command": "bench_chunked --app topk --chunks 100"}},
        "runs": runs,
        "failures": [{"workload": "topk", "mode": "stagio-prefetch", "rep": 2,
                      "error": "exit status 1"}],
        "summary": summary.summarize(runs, settings["workloads"], [4], MODE_NAMES),
    }


class SummaryTest(unittest.TestCase):
    def test_medians_ratios_and_overlap(self):
        topk = _fixed_results()["summary"]["topk"]["4"]
        self.assertAlmostEqual(topk["plain"]["median_s"], 3.2)
        self.assertAlmostEqual(topk["ideal"]["median_s"], 1.1)
        self.assertAlmostEqual(topk["stagio"]["median_s"], 2.1)
        self.assertAlmostEqual(topk["stagio"]["vs_plain"], 2.1 / 3.2)
        self.assertAlmostEqual(topk["stagio"]["speedup"], 3.2 / 2.1)
        self.assertAlmostEqual(topk["stagio"]["overlap_efficiency"], (3.2 - 2.1) / (3.2 - 1.1))
        self.assertIsNone(topk["plain"]["overlap_efficiency"])
        self.assertEqual(topk["plain"]["emulator_requests"], 41)

    def test_failed_runs_are_counted_not_timed(self):
        entry = _fixed_results()["summary"]["topk"]["4"]["stagio-prefetch"]
        self.assertEqual((entry["runs"], entry["failed"]), (1, 1))
        self.assertEqual(entry["median_s"], 1.5)
        self.assertAlmostEqual(entry["prefetch_accuracy"], 0.5)
        self.assertAlmostEqual(entry["prefetch_coverage"], 0.25)

    def test_no_io_time_to_hide_gives_no_overlap(self):
        random = _fixed_results()["summary"]["random"]["4"]
        self.assertIsNone(random["stagio"]["overlap_efficiency"])
        self.assertIsNone(random["stagio"]["prefetch_accuracy"])

    def test_a_run_on_the_real_file_system_is_compared_with_plain_fast(self):
        runs = [_run("random-bare", "plain-fast", 1, 2.0),
                _run("random-bare", "stagio-fast", 1, 3.0, stagio_stats={})]
        modes_run = ["plain-fast", "stagio-fast"]
        entries = summary.summarize(runs, ["random-bare"], [4], modes_run)["random-bare"]["4"]
        self.assertAlmostEqual(entries["stagio-fast"]["vs_plain"], 1.5)
        self.assertAlmostEqual(entries["plain-fast"]["vs_plain"], 1.0)
        self.assertEqual(modes.baseline_among(modes_run), "plain-fast")
        self.assertEqual(modes.baseline_among(["plain", "plain-fast"]), "plain")
        self.assertFalse(modes.is_compared("plain-fast"))

    def test_a_pair_without_runs_still_has_an_entry(self):
        result = summary.summarize([], ["pbench"], [4], ["plain"])
        self.assertIsNone(result["pbench"]["4"]["plain"]["median_s"])
        self.assertEqual(result["pbench"]["4"]["plain"]["runs"], 0)


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.text = report.render_markdown(_fixed_results())

    def test_has_the_command_and_a_section_per_workload(self):
        self.assertIn("tools/stagio bench --reps 2 topk random", self.text)
        self.assertIn("## topk", self.text)
        self.assertIn("## random", self.text)
        self.assertIn("`bench_chunked --app topk --chunks 100`", self.text)
        self.assertIn("MPICH 4.0.2", self.text)

    def test_the_command_carries_the_stagio_variables_every_run_saw(self):
        results = _fixed_results()
        results["settings"] = dict(results["settings"],
                                   environment={"STAGIO_NODE_SIZE": "2", "STAGIO_HINTS": "a b"})
        self.assertIn("STAGIO_NODE_SIZE=2 STAGIO_HINTS='a b' tools/stagio bench --reps 2 topk",
                      report.render_markdown(results))

    def test_a_run_on_the_real_file_system_says_so(self):
        results = _fixed_results()
        self.assertIn("- Emulated storage: 5.0 ms per request", report.render_markdown(results))
        results["settings"] = dict(results["settings"], modes=["plain-fast", "stagio-fast"],
                                   workdir="/dev/shm/w")
        text = report.render_markdown(results)
        self.assertIn("- Storage: the real file system under /dev/shm/w", text)
        self.assertNotIn("Emulated storage", text)

    def test_workload_table_rows(self):
        self.assertIn("| plain | 3.200 | 3.000 | 3.400 | 2 | 1.00 | n/a | n/a | n/a | n/a | 41 |",
                      self.text)
        self.assertIn("| stagio | 2.100 | 2.000 | 2.200 | 2 | 0.66 | n/a | 52% | n/a | 0% | 10 |",
                      self.text)
        self.assertIn("| stagio-prefetch | 1.500 | 1.500 | 1.500 | 1 (1 failed) | 0.47 | n/a | "
                      "81% | 50% | 25% | 11 |", self.text)
        self.assertIn("| ideal | 1.100 | 1.000 | 1.200 | 2 | 0.34 | n/a | n/a | n/a | n/a | n/a |",
                      self.text)

    def test_cpu_time_per_rank_is_the_median_of_the_runs(self):
        runs = [_run("random-bare", "plain-fast", rep, 1.0) for rep in (1, 2, 3)]
        for run, cpu in zip(runs, (0.5, 0.2, 0.3)):
            run["result"]["cpu_s_mean"] = cpu
        entries = summary.summarize(runs, ["random-bare"], [4], ["plain-fast"])
        self.assertAlmostEqual(entries["random-bare"]["4"]["plain-fast"]["cpu_s_per_rank"], 0.3)

    def test_overview_row(self):
        self.assertIn("| topk | 1.100 | 3.200 | 2.100 | 1.500 | 0.66 | 0.47 | 52% | 81% |",
                      self.text)
        self.assertIn("| random | 1.000 | 0.900 | 1.100 | 1.200 | 1.22 | 1.33 | n/a | n/a |",
                      self.text)

    def test_failures_and_legend(self):
        self.assertIn("## Failed runs", self.text)
        self.assertIn("- `stagio-prefetch`: libstagio.so preloaded, STAGIO_PREFETCH=auto.",
                      self.text)
        self.assertIn("- topk stagio-prefetch rep 2: exit status 1", self.text)
        self.assertIn("## Legend", self.text)
        self.assertIn("(T_plain − T_mode) / (T_plain − T_ideal)", self.text)

    def test_tables_are_well_formed(self):
        self.assertEqual(table_shape_errors(self.text), [])

    def test_renders_an_empty_results_dict(self):
        self.assertIn("# stagio bench results", report.render_markdown({}))

    def test_renders_results_of_the_first_format(self):
        # results.json before rank counts: "ranks" was one int.
        results = _fixed_results()
        results["settings"] = dict(results["settings"], ranks=4)
        del results["settings"]["suite"]
        self.assertIn("| plain | 3.200 | 3.000 | 3.400 | 2 | 1.00 |",
                      report.render_markdown(results))

    def test_several_rank_counts_give_a_set_of_tables_each(self):
        runs = [_run("topk", m, 1, t, ranks=r) for r in (2, 4)
                for m, t in (("ideal", 1.0), ("plain", 2.0))]
        settings = {"workloads": ["topk"], "modes": ["ideal", "plain"], "ranks": [2, 4],
                    "reps": 1}
        text = report.render_markdown({"settings": settings, "summary": summary.summarize(
            runs, ["topk"], [2, 4], ["ideal", "plain"])})
        for heading in ("## Overview, 2 ranks", "## topk, 2 ranks", "## Overview, 4 ranks",
                        "## topk, 4 ranks"):
            self.assertIn(heading, text)
        self.assertIn("- Runs: 2, 4 ranks, 1 rep per workload, rank count and mode", text)


@unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed")
class PlotsTest(unittest.TestCase):
    def test_draws_both_plots_even_with_missing_numbers(self):
        with tempfile.TemporaryDirectory() as out:
            paths, warning = plots.write_plots(_fixed_results(), None, out)
            self.assertIsNone(warning)
            self.assertEqual(png_names(paths), ["overlap.png", "times.png"])


class LaunchTest(unittest.TestCase):
    def test_mpich_passes_environment_with_env(self):
        command = launch.mpi_command("mpich", 4, {"A": "1", "B": "x:y"}, ["prog", "--x"])
        self.assertEqual(command, ["mpiexec.mpich", "-n", "4", "env", "A=1", "B=x:y",
                                   "prog", "--x"])
        self.assertEqual(launch.mpi_command("mpich", 1, {}, ["prog"]),
                         ["mpiexec.mpich", "-n", "1", "prog"])

    def test_openmpi_passes_environment_with_x(self):
        command = launch.mpi_command("openmpi", 4, {"A": "1"}, ["prog"])
        self.assertEqual(command, ["mpirun.openmpi", "--oversubscribe", "-n", "4",
                                   "-x", "A=1", "prog"])

    def test_openmpi_as_root_needs_consent(self):
        env = launch.launcher_environment("openmpi", {"PATH": "/bin"}, is_root=True)
        self.assertEqual(env["OMPI_ALLOW_RUN_AS_ROOT"], "1")
        self.assertEqual(env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"], "1")
        self.assertNotIn("OMPI_ALLOW_RUN_AS_ROOT",
                         launch.launcher_environment("mpich", {}, is_root=True))
        self.assertNotIn("OMPI_ALLOW_RUN_AS_ROOT",
                         launch.launcher_environment("openmpi", {}, is_root=False))

    def test_emulated_command(self):
        command = launch.emulated_command("emu", "/d", "/s.json",
                                          launch.Device(5.0, 200.0, 8), ["mpiexec"])
        self.assertEqual(command, ["emu", "--dir", "/d", "--latency-ms", "5",
                                   "--bandwidth-mbps", "200", "--parallel", "8",
                                   "--stats", "/s.json", "--", "mpiexec"])
        self.assertEqual(launch.plain_number(0.5), "0.5")


DEFAULT_MODES = [modes.mode_by_name(name) for name in MODE_NAMES]


def _config(**overrides):
    values = dict(workloads=list(workloads.WORKLOADS), modes=DEFAULT_MODES, reps=2,
                  rank_counts=(4,), mpi="mpich", build_dir="/b", out_dir="/o", work_dir="/w",
                  device=launch.Device())
    values.update(overrides)
    return bench_config.BenchConfig(**values)


ARTIFACTS = bench_config.Artifacts("/b/libstagio.so", "/b/libstagio_emu.so", "/b/stagio-emu",
                                   "mpiexec.mpich")


class PlanTest(unittest.TestCase):
    def test_rank_environment_per_mode(self):
        topk = workloads.workload_by_name("topk")
        by_name = {m.name: plan.rank_environment(topk, m, ARTIFACTS, "/s.json")
                   for m in modes.MODES}
        self.assertEqual(by_name["ideal"], {})
        self.assertEqual(by_name["plain"], {"LD_PRELOAD": "/b/libstagio_emu.so"})
        self.assertEqual(by_name["stagio"], {
            "LD_PRELOAD": "/b/libstagio.so:/b/libstagio_emu.so", "STAGIO_STATS": "/s.json",
            "STAGIO_PREFETCH": "none"})
        self.assertEqual(by_name["stagio-prefetch"]["STAGIO_PREFETCH"], "auto")
        self.assertNotIn("STAGIO_COLLECTIVE_CACHE", by_name["stagio-prefetch"])
        for name, prefetch in (("stagio-individual", "individual"),
                               ("stagio-collective", "collective")):
            self.assertEqual(by_name[name]["STAGIO_PREFETCH"], prefetch)
            self.assertEqual(by_name[name]["STAGIO_COLLECTIVE_CACHE"], "enable")

    def test_runs_are_interleaved(self):
        config = _config(workloads=[workloads.workload_by_name("topk"),
                                    workloads.workload_by_name("hill")])
        order = [(p.rep, p.workload.name, p.mode.name) for p in plan.plan_runs(config, ARTIFACTS)]
        self.assertEqual({p.ranks for p in plan.plan_runs(config, ARTIFACTS)}, {4})
        self.assertEqual(len(order), 2 * 2 * 4)
        self.assertEqual(order[:5], [(1, "topk", "ideal"), (1, "topk", "plain"),
                                     (1, "topk", "stagio"), (1, "topk", "stagio-prefetch"),
                                     (1, "hill", "ideal")])
        # The second rep runs the modes the other way round.
        self.assertEqual(order[8:12], [(2, "topk", "stagio-prefetch"), (2, "topk", "stagio"),
                                       (2, "topk", "plain"), (2, "topk", "ideal")])

    def test_ideal_skips_io_without_emulator_and_verifies_nothing(self):
        hill = workloads.workload_by_name("hill")
        config = _config(workloads=[hill], reps=1)
        ideal, plain_run, stagio_run, _ = plan.plan_runs(config, ARTIFACTS)
        self.assertEqual(ideal.command[0], "mpiexec.mpich")
        self.assertIn("--skip-io", ideal.command)
        self.assertNotIn("--verify-output", ideal.command)
        self.assertEqual(plain_run.command[0], "/b/stagio-emu")
        self.assertIn("--verify-output", plain_run.command)
        self.assertNotIn("--skip-io", plain_run.command)
        self.assertEqual(stagio_run.output, "/w/data/hill-stagio.out")
        self.assertIn("/w/data/hill-stagio.out", stagio_run.command)
        self.assertTrue(stagio_run.stagio_stats.startswith("/w/scratch/"))
        self.assertEqual(ideal.stagio_stats, "")
        self.assertEqual(ideal.emulator_stats, "")

    def test_compute_override_busy_and_quick(self):
        topk = workloads.workload_by_name("topk")
        argv = plan.workload_argv(_config(compute_ms=7.5, busy=True, quick=True), topk,
                                  modes.mode_by_name("plain"), "prog")
        self.assertEqual(argv[argv.index("--compute-ms") + 1], "7.5")
        self.assertIn("--busy", argv)
        self.assertEqual(argv[argv.index("--chunks") + 1], str(topk.quick_count))

    def test_create_input_runs_one_rank_sized_for_all(self):
        command = plan.create_input_command(_config(), workloads.workload_by_name("pbench"))
        self.assertEqual(command[:3], ["mpiexec.mpich", "-n", "1"])
        self.assertEqual(command[-3:], ["--create-input", "--ranks", "4"])


class OverheadSuiteTest(unittest.TestCase):
    def test_runs_on_the_real_file_system_with_stagio_in_one_mode_only(self):
        suite = suites.suite_by_name("overhead")
        modes_run = [modes.mode_by_name(name) for name in suite.modes]
        config = _config(workloads=list(workloads.OVERHEAD_WORKLOADS), modes=modes_run,
                         rank_counts=suite.rank_counts, reps=1)
        runs = plan.plan_runs(config, ARTIFACTS)
        self.assertEqual(len(runs), len(workloads.OVERHEAD_WORKLOADS) * 2 * 3)
        for run in runs:
            with self.subTest(f"{run.workload.name} {run.mode.name} {run.ranks}"):
                self.assertNotIn("/b/stagio-emu", run.command)
                self.assertIn("--compute-ms", run.command)
                self.assertEqual(run.command[run.command.index("--compute-ms") + 1], "0")
                preloads = " ".join(c for c in run.command if "LD_PRELOAD" in c)
                self.assertEqual("libstagio.so" in preloads, run.mode.name == "stagio-fast")


class WorkloadTableTest(unittest.TestCase):
    def test_the_default_nine_collective_four_node_one_preexec_six_sliced_four_iond_four_overhead_eight_segstore_three(
            self):
        self.assertEqual(workloads.WORKLOAD_NAMES, (
            "pbench", "pio-strided-1m", "pio-strided-4m", "pio-nested", "simpario-read",
            "simpario-write", "topk", "hill", "random",
            "coll-strided-1m", "coll-strided-4m", "coll-nested", "tile-overlap",
            "shared-interleaved",
            "preexec-pbench", "preexec-topk", "preexec-hill", "preexec-tilefft",
            "preexec-pbench-saturated", "preexec-hill-saturated",
            "preexec-pbench-sliced", "preexec-topk-sliced", "preexec-hill-sliced",
            "preexec-tilefft-sliced",
            "iond-simpario-write", "iond-simpario-read", "iond-btio-write",
            "iond-sweep-simpario-write",
            "ior-write", "ior-read", "ior-write-fpp", "ior-read-fpp", "ior-small-write",
            "ior-small-read", "random-bare", "open-close",
            "viewer-zoom", "viewer-tiles", "viewer-scan"))

    def test_rows_are_sane(self):
        for workload in workloads.WORKLOADS:
            with self.subTest(workload.name):
                # Only the overhead suite and the read-once scan of the segstore suite measure
                # I/O with nothing to hide it behind.
                no_compute = workload in workloads.OVERHEAD_WORKLOADS or \
                    workload.name == "viewer-scan"
                self.assertEqual(workload.compute_ms == 0, no_compute)
                self.assertGreater(workload.count, workload.quick_count)
                self.assertTrue(workload.reads_input or workload.output_option)
                for value in workload.parameters(False):
                    self.assertNotRegex(value, r"^\d+[KMG]")  # plain byte counts only

    def test_nested_reads_whole_groups(self):
        for name in ("pio-nested", "coll-nested"):
            with self.subTest(name):
                nested = workloads.workload_by_name(name)
                group = int(nested.args[nested.args.index("--group") + 1])
                self.assertEqual(nested.count % group, 0)
                self.assertEqual(nested.quick_count % group, 0)

    def test_input_names_depend_on_parameters_and_ranks(self):
        topk = workloads.workload_by_name("topk")
        names = {workloads.input_path("/d", topk, quick, ranks)
                 for quick in (False, True) for ranks in (2, 4)}
        self.assertEqual(len(names), 4)
        self.assertEqual(workloads.input_path("/d", topk, False, 4),
                         workloads.input_path("/d", topk, False, 4))

    def test_reads_do_not_change_a_matrix(self):
        pbench = workloads.workload_by_name("pbench")
        self.assertEqual(workloads.input_path("/d", pbench, False, 4),
                         workloads.input_path("/d", pbench, True, 4))


class ProgressTest(unittest.TestCase):
    def test_format_duration(self):
        self.assertEqual(progress.format_duration(5.4), "5s")
        self.assertEqual(progress.format_duration(125), "2m05s")
        self.assertEqual(progress.format_duration(3725), "1h02m")

    def test_eta_uses_the_same_workload_and_mode(self):
        tracker = progress.Progress([("a", "x"), ("a", "y"), ("a", "x"), ("a", "y")])
        self.assertIsNone(tracker.eta_s())
        tracker.finished(("a", "x"), 1.0)
        self.assertAlmostEqual(tracker.eta_s(), 3.0)  # y unknown yet: the overall mean
        tracker.finished(("a", "y"), 3.0)
        self.assertAlmostEqual(tracker.eta_s(), 4.0)
        line = tracker.line("a", 4, "y", 1, 2, "3.000 s")
        self.assertTrue(line.startswith("[2/4] a "), line)
        self.assertIn(" 4 ranks y ", line)
        self.assertIn("ETA 4s", line)


class CliTest(unittest.TestCase):
    def parse(self, *argv):
        return cli.build_parser().parse_args(["bench", *argv])

    def test_defaults(self):
        args = self.parse("all")
        config = bench_cli.make_config(args)
        self.assertEqual((config.reps, config.rank_counts, config.mpi), (5, (4,), "mpich"))
        self.assertEqual([m.name for m in config.modes], MODE_NAMES)
        self.assertEqual([w.name for w in config.workloads],
                         list(suites.suite_by_name("default").workloads))
        self.assertTrue(args.out.endswith(os.path.join("bench", "results", "latest")))
        self.assertTrue(args.build.endswith("build"))

    def test_mode_subset_keeps_table_order(self):
        args = self.parse("--modes", "stagio,plain", "topk")
        self.assertEqual([m.name for m in args.modes], ["plain", "stagio"])

    def test_ranks_gives_one_rank_count(self):
        config = bench_cli.make_config(self.parse("--ranks", "8", "topk"))
        self.assertEqual(config.rank_counts, (8,))

    def test_bad_values_are_refused(self):
        for argv in (["--modes", "fast", "all"], ["--reps", "0", "all"],
                     ["--parallel", "65", "all"], ["--mpi", "lam", "all"],
                     ["--suite", "nope", "all"], ["--ranks-list", "2,x", "all"],
                     ["--ranks-list", "0,2", "all"], ["--ranks", "2", "--ranks-list", "4", "all"]):
            with self.subTest(argv), self.assertRaises(SystemExit), \
                    contextlib.redirect_stderr(io.StringIO()):
                self.parse(*argv)

    def test_the_default_suite_wants_workloads_named(self):
        with self.assertRaises(SystemExit):
            bench_cli.make_config(self.parse())
        with self.assertRaises(SystemExit):
            bench_cli.make_config(self.parse("nope"))


if __name__ == "__main__":
    unittest.main()
