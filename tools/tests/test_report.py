"""Tests of `stagio report` on stats documents built here: reading and checking them, the
metrics, the findings and verdict, the terminal summary, the comparison, and the page (when
matplotlib and Jinja2 can be imported). The test on a real job's stats, in a real browser, is
tests/report/report_page.sh.
    python3 -m unittest discover -s tools/tests -p test_report.py
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stagio_tools import cli  # noqa: E402
from stagio_tools.job_report import advice  # noqa: E402
from stagio_tools.job_report import job as job_stats  # noqa: E402
from stagio_tools.job_report import numbers  # noqa: E402
from stagio_tools.job_report import text  # noqa: E402

MIB = 1 << 20


def record(reads=64, hits=300, misses=5, issued=0, used=0, late=0, wasted=0, evictions=0,
           demand=5, blocked_s=0.3, read_blocked_s=0.2, write_back_errors=0, **more):
    counters = {"cache_hits": hits, "cache_misses": misses, "prefetch_issued": issued,
                "prefetch_used": used, "prefetch_late": late, "prefetch_wasted": wasted,
                "cache_evictions": evictions, "demand_fetches": demand,
                "blocked_ns": int(blocked_s * 1e9), "read_blocked_ns": int(read_blocked_s * 1e9),
                "storage_read_bytes": 40 * MIB, "storage_reads": 40,
                "dirty_bytes_flushed": 16 * MIB, "storage_writes": 16,
                "write_back_errors": write_back_errors}
    counters.update(more)
    counters["calls"] = {"read_at": {"calls": reads, "bytes": reads * MIB},
                         "write_at_all": {"calls": 16, "bytes": 16 * MIB}}
    return counters


def document(ranks=(record(), record()), run_s=(2.0, 2.0), files=None, settings=None):
    """A stats document with one file, "/data/a", per rank and in the total."""
    total = _summed(ranks)
    return {"stagio_version": "0.6.0", "ranks": len(ranks),
            "settings": settings if settings is not None else {"stagio_cache_size": "64M",
                                                                "stagio_prefetch_max": "16M"},
            "per_rank": [{"rank": r, "host": "node1", "run_s": run_s[r],
                          "files": {"/data/a": ranks[r]}, "total": ranks[r]}
                         for r in range(len(ranks))],
            "total": dict(total, files=files if files is not None else {"/data/a": total})}


def _summed(records):
    total = {}
    for rec in records:
        for key, value in rec.items():
            if key == "calls":
                calls = total.setdefault("calls", {})
                for kind, entry in value.items():
                    into = calls.setdefault(kind, {"calls": 0, "bytes": 0})
                    into["calls"] += entry["calls"]
                    into["bytes"] += entry["bytes"]
            else:
                total[key] = total.get(key, 0) + value
    return total


def job(doc):
    return job_stats.from_document(doc, "stats.json")


class ReadingTest(unittest.TestCase):
    def test_a_missing_file_a_non_json_file_and_another_document_are_refused(self):
        with tempfile.TemporaryDirectory() as directory:
            missing = os.path.join(directory, "none.json")
            with self.assertRaisesRegex(job_stats.StatsError, "cannot read it"):
                job_stats.load(missing)
            garbage = os.path.join(directory, "garbage.json")
            with open(garbage, "w") as handle:
                handle.write("{not json")
            with self.assertRaisesRegex(job_stats.StatsError, "not JSON"):
                job_stats.load(garbage)
            other = os.path.join(directory, "results.json")
            with open(other, "w") as handle:
                json.dump({"runs": []}, handle)
            with self.assertRaisesRegex(job_stats.StatsError, "not a stagio stats document"):
                job_stats.load(other)

    def test_a_document_from_before_run_times_reads_as_not_available(self):
        doc = document()
        for entry in doc["per_rank"]:
            del entry["run_s"], entry["host"]
        del doc["settings"]
        old = job(doc)
        self.assertIsNone(old.run_s)
        self.assertIsNone(old.blocked_share)
        rows = dict(numbers.job_rows(old))
        self.assertEqual(rows["run time (slowest rank)"], "n/a")
        self.assertIn("verdict:", text.summary(old, advice.findings(old)))


class MetricsTest(unittest.TestCase):
    def test_ratios_come_from_the_counters(self):
        rec = job(document(ranks=(record(hits=90, misses=10, issued=40, used=30, demand=10),),
                           run_s=(2.0,))).total
        self.assertAlmostEqual(rec.hit_ratio, 0.9)
        self.assertAlmostEqual(rec.accuracy, 0.75)
        self.assertAlmostEqual(rec.coverage, 0.75)
        self.assertEqual(rec.read_bytes, 64 * MIB)
        self.assertEqual(rec.write_calls, 16)

    def test_the_run_time_is_the_slowest_ranks_and_the_imbalance_is_against_the_mean(self):
        j = job(document(ranks=(record(blocked_s=0.1), record(blocked_s=0.5)), run_s=(2.0, 3.0)))
        self.assertEqual(j.run_s, 3.0)
        self.assertAlmostEqual(j.blocked_share, 0.6 / 5.0)
        slowest, ratio = j.imbalance()
        self.assertEqual(slowest.rank, 1)
        self.assertAlmostEqual(ratio, 0.5 / 0.3)


class AdviceTest(unittest.TestCase):
    def test_prefetches_evicted_unused_ask_for_a_larger_cache(self):
        j = job(document(ranks=(record(issued=100, used=60, wasted=40, evictions=50),),
                         run_s=(2.0,)))
        self.assertEqual(advice.verdict(j), "Raise stagio_cache_size (now 64M): 40% of "
                                            "prefetched blocks were evicted unused.")

    def test_failed_write_backs_come_before_any_other_advice(self):
        j = job(document(ranks=(record(issued=100, used=60, wasted=40, evictions=50,
                                       write_back_errors=3),), run_s=(2.0,)))
        found = advice.findings(j)
        self.assertEqual(found[0].severity, advice.ERROR)
        self.assertTrue(advice.verdict(j, found).startswith("3 write-back requests failed"))

    def test_late_prefetches_ask_to_run_further_ahead(self):
        j = job(document(ranks=(record(issued=100, used=100, late=80),), run_s=(2.0,)))
        self.assertIn("Raise stagio_prefetch_max (now 16M)", advice.verdict(j))

    def test_reads_without_a_pattern_are_named_with_their_file(self):
        j = job(document(ranks=(record(reads=200, hits=20, misses=180, demand=180),),
                         run_s=(2.0,)))
        random = [f for f in advice.findings(j) if f.scope == "/data/a"]
        self.assertEqual(len(random), 1)
        self.assertIn("follow no pattern", random[0].text)

    def test_uneven_ranks_and_a_job_that_is_mostly_io_are_noted(self):
        j = job(document(ranks=(record(blocked_s=0.1), record(blocked_s=1.9)), run_s=(2.0, 2.0)))
        notes = " ".join(f.text for f in advice.findings(j))
        self.assertIn("rank 1 spent 1.90 s", notes)
        self.assertIn("50% of their run time", notes)

    def test_a_job_stagio_served_well_gets_nothing_to_change(self):
        j = job(document(ranks=(record(issued=100, used=95, demand=5),), run_s=(2.0,)))
        self.assertEqual(advice.findings(j), [])
        self.assertTrue(advice.verdict(j).endswith("nothing to change."))
        self.assertIn("98%", advice.verdict(j))  # 300 hits, 5 misses

    def test_small_numbers_say_nothing(self):
        # 10 prefetches, all wasted: too few blocks to judge the cache by.
        j = job(document(ranks=(record(issued=10, wasted=10, evictions=10),), run_s=(2.0,)))
        self.assertFalse([f for f in advice.findings(j) if f.severity == advice.ACTION])


class ComparisonTest(unittest.TestCase):
    def test_the_faster_run_is_named_with_its_ratio(self):
        plain = job(document(run_s=(4.0, 4.0)))
        stagio = job(document(run_s=(1.0, 2.0)))
        self.assertEqual(numbers.compare_verdict(plain, stagio),
                         "B is faster: run time 2.000 s against 4.000 s (B takes 0.50x A's).")
        rows = {row[0]: row for row in numbers.compare_rows(plain, stagio)}
        self.assertEqual(rows["run time (slowest rank)"][3], "0.50")


class CommandTest(unittest.TestCase):
    def run_report(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["report", *argv])
        return status, out.getvalue(), err.getvalue()

    def test_an_unreadable_file_is_a_clear_error_and_status_2(self):
        status, out, err = self.run_report("/nonexistent/stats.json", "--no-page")
        self.assertEqual(status, 2)
        self.assertIn("/nonexistent/stats.json: cannot read it", err)
        self.assertEqual(out, "")

    def test_the_summary_shows_the_numbers_and_the_verdict(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "stats.json")
            with open(path, "w") as handle:
                json.dump(document(ranks=(record(issued=100, used=60, wasted=40,
                                                 evictions=50),), run_s=(2.0,)), handle)
            status, out, _ = self.run_report(path, "--no-page")
        self.assertEqual(status, 0)
        self.assertIn("64.00 MiB in 64 calls", out)
        self.assertIn("verdict: Raise stagio_cache_size", out)


def _importable(name):
    try:
        __import__(name)
    except ImportError:
        return False
    return True


@unittest.skipUnless(_importable("jinja2") and _importable("matplotlib"),
                     "the page needs jinja2 and matplotlib in this interpreter")
class PageTest(unittest.TestCase):
    def test_the_page_holds_the_tables_the_verdict_and_its_three_plots(self):
        from stagio_tools.job_report import page
        j = job(document(ranks=(record(issued=100, used=60, wasted=40, evictions=50),),
                         run_s=(2.0,)))
        with tempfile.TemporaryDirectory() as directory:
            path = page.write_job_page(j, advice.findings(j), directory)
            with open(path, encoding="utf-8") as handle:
                html = handle.read()
            pngs = sorted(name for name in os.listdir(directory) if name.endswith(".png"))
        self.assertEqual(pngs, ["bytes.png", "prefetch.png", "time.png"])
        self.assertEqual(html.count('src="data:image/png;base64,'), 3)
        self.assertIn(advice.verdict(j), html)
        self.assertIn("<td>64.00 MiB in 64 calls</td>", html)


if __name__ == "__main__":
    unittest.main()
