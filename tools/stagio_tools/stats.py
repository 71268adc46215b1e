"""Reading what stagio and the storage emulator say about a run, and the prefetch metrics.

stagio writes JSON at MPI_Finalize when STAGIO_STATS=path is set; its "total" object holds the
counters summed over ranks and files. The emulator (stagio-emu --stats) writes one flat object
of device counters. Counters are added to stagio over time (the prefetch ones are new), so every
counter is optional here: a missing one is None and shows as "n/a", never a crash.
"""

import json

from . import metrics

# The stagio counters the harness keeps per run, from the stats document's "total".
STAGIO_COUNTERS = (
    "cache_hits", "cache_misses", "storage_reads", "storage_read_bytes", "storage_writes",
    "dirty_bytes_flushed", "blocked_ns",
    "prefetch_issued", "prefetch_used", "prefetch_wasted", "prefetch_late",
    "demand_fetches", "read_blocked_ns",
    # The collective cache's: proposals dropped as duplicates between ranks (or already
    # demanded, cached, in flight), bytes sent to other ranks, block requests to aggregators.
    "prefetch_redundant", "exchanged_bytes", "remote_requests",
    # Pre-execution (issue 5): the helper's prefetch calls, those skipped because the main
    # thread had already started the call, the waits for a dirty range's write, at the PPIS
    # gate and for the main thread to catch up (a cache's worth ahead), and the calls dropped.
    "preexec_calls", "preexec_skipped_lagging", "preexec_dirty_waits", "preexec_gate_waits",
    "preexec_budget_waits", "preexec_dropped",
)

# The emulator's device counters (its "params" are kept apart: they are the same for every run).
EMULATOR_COUNTERS = (
    "requests", "read_requests", "write_requests", "sync_requests",
    "bytes_read", "bytes_written", "charged_ns",
)


def load_json_file(path):
    """(document, None) or (None, why): a run whose stats file is missing or torn still has a
    valid time, so the caller records the reason and carries on."""
    try:
        with open(path, encoding="utf-8") as stream:
            return json.load(stream), None
    except FileNotFoundError:
        return None, f"{path}: not written"
    except (OSError, ValueError) as error:
        return None, f"{path}: {error}"


def _number(value):
    # bool is an int in Python; a counter is never true/false.
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def pick_counters(source, names):
    """{name: number or None} for each name, from a dict that may lack some or be None."""
    source = source if isinstance(source, dict) else {}
    return {name: _number(source.get(name)) for name in names}


def stagio_summary(document):
    """The kept stagio counters from a stats document (its "total")."""
    total = document.get("total") if isinstance(document, dict) else None
    return pick_counters(total, STAGIO_COUNTERS)


def emulator_summary(document):
    """The emulator's counters, plus its device parameters when present."""
    summary = pick_counters(document, EMULATOR_COUNTERS)
    if isinstance(document, dict) and isinstance(document.get("params"), dict):
        summary["params"] = document["params"]
    return summary


def sum_counters(summaries, names):
    """Counters summed over runs. A counter missing from any run is None: a partial sum would
    look like a real number and mislead."""
    totals = {}
    for name in names:
        values = [s.get(name) if isinstance(s, dict) else None for s in summaries]
        totals[name] = sum(values) if values and all(v is not None for v in values) else None
    return totals


def mean_request_bytes(emulator_summaries):
    """Bytes moved per data request (reads and writes; syncs move none) over all the runs, as
    the emulator counted them: the same measure for plain MPI-IO and stagio. None when a run
    lacks a counter or no data request was made."""
    names = ("bytes_read", "bytes_written", "read_requests", "write_requests")
    totals = sum_counters(emulator_summaries, names)
    if not emulator_summaries or any(totals[name] is None for name in names):
        return None
    return metrics.ratio(totals["bytes_read"] + totals["bytes_written"],
                         totals["read_requests"] + totals["write_requests"])


def transfer_seconds(emulator_summary):
    """How long the emulated device needed to move a run's bytes at its bandwidth, latency
    and parallelism aside: the least time the run's I/O can take. None when unknown."""
    if not isinstance(emulator_summary, dict):
        return None
    params = emulator_summary.get("params") or {}
    bandwidth = _number(params.get("bandwidth_mbps"))
    moved = [emulator_summary.get(k) for k in ("bytes_read", "bytes_written")]
    if not bandwidth or any(m is None for m in moved):
        return None
    return sum(moved) / (bandwidth * 1e6)


def prefetch_accuracy(counters):
    """prefetch_used / prefetch_issued: how many prefetched blocks were read before eviction."""
    return metrics.ratio(counters.get("prefetch_used"), counters.get("prefetch_issued"))


def prefetch_coverage(counters):
    """prefetch_used / (prefetch_used + demand_fetches): the share of fetched-for-reading blocks
    that a prefetch brought in, rather than a read waiting on storage."""
    used = counters.get("prefetch_used")
    demand = counters.get("demand_fetches")
    if used is None or demand is None:
        return None
    return metrics.ratio(used, used + demand)
