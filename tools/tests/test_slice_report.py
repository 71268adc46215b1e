"""The preexec-slice suite's report: the generated helper's time against the hand-written
one's, and the verdict on the 5% target."""
import unittest

from stagio_tools import slice_report


def _summary(times):
    """A summary (summary.py's shape) with PPIS medians: {(workload, ranks): seconds}."""
    summary = {}
    for (workload, ranks), seconds in times.items():
        summary.setdefault(workload, {})[str(ranks)] = {"ppis": {"median_s": seconds}}
    return summary


NAMES = ["preexec-topk", "preexec-topk-sliced"]


class SliceVerdictTest(unittest.TestCase):
    def verdict(self, times, workloads=NAMES, counts=(1,)):
        return slice_report.evaluate(_summary(times), workloads, counts)[0]

    def test_within_five_percent_is_met(self):
        met = self.verdict({("preexec-topk", 1): 1.00, ("preexec-topk-sliced", 1): 1.04})
        self.assertTrue(met.met)

    def test_beyond_five_percent_is_not_met_and_says_where(self):
        missed = self.verdict({("preexec-topk", 1): 1.00, ("preexec-topk-sliced", 1): 1.06,
                               ("preexec-topk", 2): 1.00, ("preexec-topk-sliced", 2): 0.90},
                              counts=(1, 2))
        self.assertFalse(missed.met)
        self.assertIn("preexec-topk-sliced at 1: 1.060", missed.measured)

    def test_a_generated_workload_without_its_pair_is_not_judged(self):
        self.assertIsNone(self.verdict({("preexec-topk-sliced", 1): 1.0}).met)
        self.assertIsNone(self.verdict({}, ["preexec-topk"]).met)


if __name__ == "__main__":
    unittest.main()
