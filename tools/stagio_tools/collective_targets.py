"""The targets of issue 4 (collective caching and prefetching), checked against a summary.

  1. Collective prefetching's speed-up over plain MPI-IO is at least twice individual
     prefetching's, averaged over the strided cases (every strided workload at every rank
     count): mean speed-up of stagio-collective >= 2 x mean speed-up of stagio-individual.
  2. Collective prefetching's speed-up does not drop from 4 to 16 ranks, on any workload.
  3. On the strided cases stagio-collective makes at least 4x fewer storage requests than
     stagio-individual, in every case (requests as the emulator counts them).
  4. On the tile workload stagio-collective filters redundant prefetches: prefetch_redundant
     > 0 at every rank count.

Speed-up = T_plain / T_mode (medians). Each verdict says what was measured; a target whose
numbers are missing (a mode, a rank count or a counter not run or not reported) is not
judged: met is None. Nothing here is tuned: the thresholds are the issue's.
"""

from . import metrics
from . import summary as summary_table
from . import verdicts
from .verdicts import Verdict

INDIVIDUAL = "stagio-individual"
COLLECTIVE = "stagio-collective"
STRIDED = ("coll-strided-1m", "coll-strided-4m", "coll-nested")
TILE = "tile-overlap"

SPEEDUP_FACTOR = 2.0
REQUEST_FACTOR = 4.0
SCALING_FROM, SCALING_TO = 4, 16


def evaluate(summary, workloads, rank_counts):
    """The four verdicts for the workloads and rank counts that were run."""
    return [_speedup_ratio(summary, workloads, rank_counts),
            _no_drop_with_ranks(summary, workloads, rank_counts),
            _fewer_requests(summary, workloads, rank_counts),
            _redundancy_filtered(summary, workloads, rank_counts)]


def _value(summary, workload, ranks, mode, key):
    return summary_table.entry(summary, workload, ranks, mode).get(key)


def _strided_cases(workloads, rank_counts):
    return [(w, r) for w in workloads if w in STRIDED for r in rank_counts]


def _speedup_ratio(summary, workloads, rank_counts):
    target = (f"collective speed-up ≥ {SPEEDUP_FACTOR:g}× individual speed-up, averaged over "
              "the strided cases")
    pairs = [(_value(summary, w, r, COLLECTIVE, "speedup"),
              _value(summary, w, r, INDIVIDUAL, "speedup"))
             for w, r in _strided_cases(workloads, rank_counts)]
    pairs = [(c, i) for c, i in pairs if c is not None and i is not None]
    if not pairs:
        return Verdict(target, "no strided case with both modes measured", None)
    collective = sum(c for c, _ in pairs) / len(pairs)
    individual = sum(i for _, i in pairs) / len(pairs)
    factor = metrics.ratio(collective, individual)
    measured = (f"mean speed-up {collective:.2f} (collective) vs {individual:.2f} (individual) "
                f"over {len(pairs)} cases: {factor:.2f}×")
    return Verdict(target, measured, factor >= SPEEDUP_FACTOR)


def _no_drop_with_ranks(summary, workloads, rank_counts):
    target = (f"no drop in collective speed-up from {SCALING_FROM} to {SCALING_TO} ranks")
    if SCALING_FROM not in rank_counts or SCALING_TO not in rank_counts:
        return Verdict(target, f"needs runs at {SCALING_FROM} and {SCALING_TO} ranks", None)
    cases = []
    for workload in workloads:
        low = _value(summary, workload, SCALING_FROM, COLLECTIVE, "speedup")
        high = _value(summary, workload, SCALING_TO, COLLECTIVE, "speedup")
        if low is not None and high is not None:
            cases.append((f"{workload} {low:.2f} → {high:.2f}", high >= low))
    return verdicts.every_case(target, cases, "no workload with both speed-ups measured")


def _fewer_requests(summary, workloads, rank_counts):
    target = (f"≥ {REQUEST_FACTOR:g}× fewer storage requests than individual prefetching on "
              "the strided cases")
    factors = []
    for workload, ranks in _strided_cases(workloads, rank_counts):
        factor = metrics.ratio(_value(summary, workload, ranks, INDIVIDUAL, "emulator_requests"),
                               _value(summary, workload, ranks, COLLECTIVE, "emulator_requests"))
        if factor is not None:
            factors.append((factor, f"{workload} at {ranks}"))
    if not factors:
        return Verdict(target, "no strided case with both request counts", None)
    worst, where = min(factors)
    measured = (f"individual/collective requests: lowest {worst:.2f}× ({where} ranks), "
                f"median {metrics.median([f for f, _ in factors]):.2f}× over {len(factors)} "
                "cases")
    return Verdict(target, measured, worst >= REQUEST_FACTOR)


def _redundancy_filtered(summary, workloads, rank_counts):
    target = "redundant prefetches filtered on the tile workload (prefetch_redundant > 0)"
    if TILE not in workloads:
        return Verdict(target, f"{TILE} was not run", None)
    cases = []
    for ranks in rank_counts:
        counters = _value(summary, TILE, ranks, COLLECTIVE, "stagio") or {}
        redundant = counters.get("prefetch_redundant")
        if redundant is not None:
            cases.append((f"{ranks} ranks: {redundant:g}", redundant > 0))
    return verdicts.every_case(target, cases, "stagio reported no prefetch_redundant counter",
                               prefix="prefetch_redundant summed over the runs: ",
                               separator=", ")
