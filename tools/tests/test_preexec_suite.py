"""Unit tests of the pre-execution suite of `stagio bench`: its workloads and modes, how each
mode runs an example that links stagio, issue 5's targets, the report and its plots. No MPI, no
emulator; the plots only where matplotlib is installed.
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
from stagio_tools import launch  # noqa: E402
from stagio_tools import modes  # noqa: E402
from stagio_tools import plan  # noqa: E402
from stagio_tools import plots  # noqa: E402
from stagio_tools import preexec_targets as targets  # noqa: E402
from stagio_tools import report  # noqa: E402
from stagio_tools import stats  # noqa: E402
from stagio_tools import suites  # noqa: E402
from stagio_tools import summary  # noqa: E402
from stagio_tools import workloads  # noqa: E402

from fixtures import make_run, png_names, table_shape_errors  # noqa: E402

PREEXEC = suites.suite_by_name("preexec")
MODES = ("ideal", "plain", "stagio-off", "pp", "ppis")
PBENCH, SATURATED = "preexec-pbench", "preexec-pbench-saturated"


class SuiteTableTest(unittest.TestCase):
    def test_the_preexec_suite(self):
        self.assertEqual(PREEXEC.workloads, (
            "preexec-pbench", "preexec-topk", "preexec-hill", "preexec-tilefft",
            "preexec-pbench-saturated", "preexec-hill-saturated"))
        self.assertEqual(PREEXEC.modes, MODES)
        self.assertEqual((PREEXEC.rank_counts, PREEXEC.quick_rank_counts), ((1, 2, 4, 8), (1, 2)))
        self.assertEqual((PREEXEC.reps, PREEXEC.quick_reps), (3, 1))
        self.assertEqual(PREEXEC.report, suites.PREEXEC)

    def test_its_workloads_are_the_examples(self):
        for name in PREEXEC.workloads:
            with self.subTest(name):
                workload = workloads.workload_by_name(name)
                self.assertEqual(workloads.program_path("/b", workload),
                                 f"/b/examples/{workload.program}")
                self.assertTrue(workload.links_stagio)
                self.assertEqual(workload.ideal_option, "--skip-reads")
                self.assertEqual(name.endswith("-saturated"), targets.is_saturated(name))

    def test_compute_is_the_device_models_read_time(self):
        self.assertEqual(workloads.read_ms(64 * 1024), 5.33)            # 5 ms + 0.33 ms
        self.assertEqual(workloads.read_ms(16 * 1024, requests=2), 10.08)
        tile = workloads.workload_by_name("preexec-tilefft")
        self.assertEqual(tile.compute_ms, 10.08)
        self.assertEqual(workloads.workload_by_name(PBENCH).compute_ms, 5.33)

    def test_saturated_rows_share_the_input_of_the_normal_row(self):
        normal, saturated = (workloads.workload_by_name(n) for n in (PBENCH, SATURATED))
        self.assertEqual(workloads.input_path("/d", normal, False, 8),
                         workloads.input_path("/d", saturated, False, 8))
        self.assertEqual(saturated.device, workloads.SATURATED_DEVICE)
        self.assertIsNone(normal.device)

    def test_the_examples_run_with_stagios_defaults(self):
        for name in PREEXEC.workloads:
            self.assertEqual(workloads.workload_by_name(name).stagio_settings, ())

    def test_the_preexec_modes_differ_in_stagio_preexec_alone(self):
        for name, value in (("stagio-off", "off"), ("pp", "pp"), ("ppis", "ppis")):
            mode = modes.mode_by_name(name)
            self.assertEqual((mode.prefetch, mode.settings), ("auto", (("STAGIO_PREEXEC", value),)))


class CliTest(unittest.TestCase):
    def config(self, *argv):
        return bench_cli.make_config(cli.build_parser().parse_args(["bench", *argv]))

    def test_the_suite_fills_in_everything(self):
        config = self.config("--suite", "preexec")
        self.assertEqual([w.name for w in config.workloads], list(PREEXEC.workloads))
        self.assertEqual([m.name for m in config.modes], list(MODES))
        self.assertEqual((config.rank_counts, config.reps), ((1, 2, 4, 8), 3))
        self.assertEqual(config.device, workloads.PREEXEC_DEVICE)

    def test_quick(self):
        config = self.config("--suite", "preexec", "--quick")
        self.assertEqual((config.rank_counts, config.reps), ((1, 2), 1))

    def test_the_command_line_overrides_the_suite(self):
        config = self.config("--suite", "preexec", "--reps", "2", "--parallel", "8")
        self.assertEqual(config.reps, 2)
        self.assertEqual(config.device, launch.Device(5.0, 200.0, 8))
        # A row defined on its own device keeps it.
        saturated = workloads.workload_by_name(SATURATED)
        self.assertEqual(config.device_for(saturated), workloads.SATURATED_DEVICE)

    def test_the_other_suites_keep_their_defaults(self):
        config = self.config("all")
        self.assertEqual((config.reps, config.device), (5, launch.Device(5.0, 200.0, 8)))
        self.assertEqual(self.config("--quick", "all").reps, 5)


ARTIFACTS = bench_config.Artifacts("/b/libstagio.so", "/b/libstagio_emu.so", "/b/stagio-emu",
                                   "mpiexec.mpich")


def _config(names, **overrides):
    values = dict(workloads=[workloads.workload_by_name(n) for n in names],
                  modes=[modes.mode_by_name(n) for n in MODES], reps=1, rank_counts=(2,),
                  mpi="mpich", build_dir="/b", out_dir="/o", work_dir="/w",
                  device=workloads.PREEXEC_DEVICE, suite="preexec")
    values.update(overrides)
    return bench_config.BenchConfig(**values)


class PlanTest(unittest.TestCase):
    def runs(self, name):
        return {p.mode.name: p for p in plan.plan_runs(_config([name]), ARTIFACTS)}

    def test_modes_without_stagio_disable_the_linked_library(self):
        pbench = workloads.workload_by_name(PBENCH)
        env = {m: plan.rank_environment(pbench, modes.mode_by_name(m), ARTIFACTS, "/s.json")
               for m in MODES}
        self.assertEqual(env["ideal"], {"LD_PRELOAD": "/b/libstagio_emu.so",
                                        "STAGIO_DISABLE": "1"})
        self.assertEqual(env["plain"], env["ideal"])
        self.assertEqual(env["ppis"], {
            "LD_PRELOAD": "/b/libstagio.so:/b/libstagio_emu.so", "STAGIO_STATS": "/s.json",
            "STAGIO_PREFETCH": "auto", "STAGIO_PREEXEC": "ppis"})
        self.assertEqual(env["stagio-off"]["STAGIO_PREEXEC"], "off")
        self.assertEqual(env["pp"]["STAGIO_PREEXEC"], "pp")

    def test_the_optimum_skips_reads_on_the_emulated_device(self):
        ideal = self.runs("preexec-hill")["ideal"]
        self.assertEqual(ideal.command[0], "/b/stagio-emu")
        self.assertIn("--skip-reads", ideal.command)
        self.assertNotIn("--skip-io", ideal.command)
        self.assertTrue(ideal.emulator_stats)
        self.assertIn("/b/examples/preexec_hill", ideal.command)
        self.assertIn("--output", ideal.command)
        self.assertNotIn("--verify-output", ideal.command)

    def test_each_row_runs_on_its_device(self):
        def parallel(run):
            return run.command[run.command.index("--parallel") + 1]
        self.assertEqual(parallel(self.runs(PBENCH)["plain"]), "32")
        self.assertEqual(parallel(self.runs(SATURATED)["ppis"]), "2")
        self.assertEqual(parallel(self.runs(SATURATED)["ideal"]), "2")

    def test_the_default_suites_ideal_is_unchanged(self):
        topk = workloads.workload_by_name("topk")
        self.assertFalse(plan.emulated(topk, modes.mode_by_name("ideal")))
        self.assertEqual(plan.rank_environment(topk, modes.mode_by_name("ideal"), ARTIFACTS, ""),
                         {})

    def test_the_examples_need_libstagio_even_without_a_stagio_mode(self):
        config = _config([PBENCH], modes=[modes.mode_by_name("plain")])
        missing = bench_config.missing_pieces(config, ARTIFACTS)
        self.assertIn("/b/libstagio.so (not built)", missing)
        self.assertIn("/b/examples/preexec_pbench (not built)", missing)


def _counters(**values):
    return dict(dict.fromkeys(stats.STAGIO_COUNTERS, 0), **values)


# Per (workload, ranks): times of ideal, plain, stagio-off, pp, ppis.
CASES = {
    (PBENCH, 1): (1.0, 2.0, 1.98, 1.2, 1.1),        # ppis: 90% of the bound, 45% shorter
    (PBENCH, 8): (1.0, 2.2, 2.1, 1.5, 1.3),         # ppis: 75% of the bound, 41% shorter
    (SATURATED, 1): (1.0, 2.0, 1.9, 1.3, 1.25),
    (SATURATED, 8): (1.0, 6.0, 5.0, 5.5, 4.8),      # ppis 13% shorter than pp
}


def _results(cases=CASES):
    runs = []
    for (workload, ranks), times in cases.items():
        for rep in (1, 2):
            for mode, elapsed in zip(MODES, times):
                counters = _counters(preexec_calls=250, preexec_gate_waits=7 * rep) \
                    if mode in ("pp", "ppis") else _counters() if mode == "stagio-off" else None
                runs.append(make_run(workload, mode, rep, elapsed, ranks=ranks,
                                     stagio_stats=counters,
                                     requests=None if mode == "ideal" else 250))
    names = sorted({w for w, _ in cases}, key=list(PREEXEC.workloads).index)
    counts = sorted({r for _, r in cases})
    settings = {"suite": "preexec", "workloads": names, "modes": list(MODES), "ranks": counts,
                "reps": 2, "mpi": "mpich", "quick": False}
    return {"command_line": "tools/stagio bench --suite preexec", "settings": settings,
            "emulator": {"latency_ms": 5.0, "bandwidth_mbps": 200.0, "parallel": 32},
            "workloads": {SATURATED: {"description": "On a saturated device.",
                                      "device": {"latency_ms": 5.0, "bandwidth_mbps": 50.0,
                                                 "parallel": 2},
                                      "stagio_settings": {"STAGIO_COLLECTIVE_CACHE": "disable"}}},
            "runs": runs, "failures": [],
            "summary": summary.summarize(runs, names, counts, list(MODES))}


def _verdicts(results):
    settings = results["settings"]
    return targets.evaluate(results["summary"], settings["workloads"], settings["ranks"])


class TargetsTest(unittest.TestCase):
    def setUp(self):
        self.verdicts = _verdicts(_results())

    def test_share_of_the_bound_on_the_normal_workloads_not_met(self):
        verdict = self.verdicts[0]
        self.assertFalse(verdict.met)
        self.assertEqual(verdict.measured, "lowest share 75% (preexec-pbench at 8 ranks, 41% "
                                           "shorter); reductions 41%-45% over 2 cases")

    def test_never_slower_than_plain_met(self):
        verdict = self.verdicts[1]
        self.assertTrue(verdict.met)
        self.assertIn("within 3%", verdict.target)
        self.assertIn("highest 0.800 (preexec-pbench-saturated at 8 ranks) over 4 cases",
                      verdict.measured)

    def test_not_slower_than_pp_fails_beyond_the_noise_margin(self):
        self.assertTrue(self.verdicts[2].met)
        cases = dict(CASES)
        cases[(PBENCH, 1)] = (1.0, 2.0, 1.98, 1.2, 1.25)   # 4% slower than pp
        cases[(PBENCH, 8)] = (1.0, 2.2, 2.1, 1.3, 1.33)    # 2.3%: within the margin
        verdict = _verdicts(_results(cases))[2]
        self.assertFalse(verdict.met)
        self.assertTrue(verdict.measured.endswith("; slower in preexec-pbench at 1 rank"),
                        verdict.measured)

    def test_clearly_better_than_pp_where_the_device_saturates(self):
        verdict = self.verdicts[3]
        self.assertTrue(verdict.met)
        self.assertEqual(verdict.measured,
                         "preexec-pbench-saturated at 8 ranks: PPIS 13% shorter")

    def test_pbench_reduction_with_stagio_off_beside_it(self):
        verdict = self.verdicts[4]
        self.assertTrue(verdict.met)
        self.assertEqual(verdict.measured, "shorter than plain: 1 rank: PPIS 45%, stagio-off "
                                           "1%; 8 ranks: PPIS 41%, stagio-off 5%")

    def test_nothing_measured_is_not_judged(self):
        verdicts = targets.evaluate({}, [PBENCH, SATURATED], [1, 8])
        self.assertEqual([v.met for v in verdicts], [None] * 5)
        self.assertEqual(targets.evaluate({}, [], [])[3].measured, "no saturated workload run")


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.text = report.render_markdown(_results())

    def test_is_the_preexec_report_with_the_targets(self):
        self.assertIn("# stagio bench results: pre-execution prefetching", self.text)
        self.assertIn("## Targets (issue 5)", self.text)
        self.assertIn("| on PBench random rows PPIS ≥ 30% shorter than plain, where pattern "
                      "prefetching gains nothing (every rank count) | shorter than plain: "
                      "1 rank: PPIS 45%", self.text)
        self.assertIn("**not met**", self.text)

    def test_time_rows(self):
        self.assertIn("| ranks | T ideal | T plain | T stagio-off | T pp | T ppis | shorter "
                      "stagio-off | shorter pp | shorter ppis | of bound stagio-off | of bound "
                      "pp | of bound ppis |", self.text)
        self.assertIn("| 8 | 1.000 | 2.200 | 2.100 | 1.500 | 1.300 | 5% | 32% | 41% | 8% | 58% "
                      "| 75% |", self.text)

    def test_counter_rows(self):
        self.assertIn("| 8 | ppis | 250 | n/a | 0 | 0 | 250 | 0 | 0 | 10.5 | 0 |", self.text)
        self.assertIn("| 8 | plain | 250 | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |",
                      self.text)

    def test_the_saturated_workload_names_its_device_and_stagio_settings(self):
        self.assertIn("Its own emulated device: 5.0 ms per request, 50.0 MB/s shared, 2 "
                      "requests in parallel.", self.text)
        self.assertIn("Its stagio runs set `STAGIO_COLLECTIVE_CACHE=disable`.", self.text)

    def test_tables_are_well_formed(self):
        self.assertEqual(table_shape_errors(self.text), [])

    def test_renders_with_nothing_measured(self):
        self.assertIn("not judged", report.render_markdown({"settings": {"suite": "preexec"}}))


@unittest.skipUnless(importlib.util.find_spec("matplotlib"), "matplotlib is not installed")
class PlotsTest(unittest.TestCase):
    def test_draws_time_and_bound_even_with_missing_numbers(self):
        results = _results()
        results["settings"]["ranks"] = [1, 2, 8]  # nothing measured at 2
        with tempfile.TemporaryDirectory() as out:
            paths, warning = plots.write_plots(results, None, out)
            self.assertIsNone(warning)
            self.assertEqual(png_names(paths), ["bound.png", "time.png"])


if __name__ == "__main__":
    unittest.main()
