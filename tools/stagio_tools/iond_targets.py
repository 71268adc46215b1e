"""The targets of issue 6 (the I/O-node daemon), checked against a summary of the iond suite.

  1. Writes, close included, at least 4x plain MPI-IO's throughput with the daemon: on every
     write case (iond-simpario-write, iond-btio-write at each rank count), the iond mode's I/O
     throughput (bytes over the time in MPI-IO calls, open and close included: seed 004's
     measure) at least WRITE_GAIN times plain's.
  2. Reads with prefetching at least 8x plain's throughput: likewise on every read case.
  3. The second tier adds a gain when the link is the bottleneck: on every case, iond's
     throughput at least TIER_GAIN times the client tier's alone. Judged only when the run's link
     is slower than its device (--link-bottleneck); otherwise not judged, saying so.

A case is a workload at a rank count it ran at; throughputs are medians over the reps. TIER_GAIN
(5%) is this harness's reading of "adds gain": more than the run-to-run noise of medians on a
shared 2-core machine. A target whose numbers are missing is not judged.
"""

from . import metrics
from . import summary as summary_table
from . import verdicts
from . import workloads as table
from .verdicts import Verdict

PLAIN, CLIENT, IOND = "plain", "client", "iond"
WRITE_GAIN = 4.0
READ_GAIN = 8.0
TIER_GAIN = 1.05


def is_write(workload):
    """True for the workloads that write (their output is the file they make)."""
    try:
        return bool(table.workload_by_name(workload).output_option)
    except KeyError:
        return False


def cases(summary, workloads, rank_counts):
    """(workload, ranks) for every case with at least one run of any mode."""
    found = []
    for workload in workloads:
        for ranks in rank_counts:
            per_mode = summary.get(workload, {}).get(str(ranks), {})
            if any(e.get("runs") or e.get("failed") for e in per_mode.values()):
                found.append((workload, ranks))
    return found


def throughput_gain(summary, workload, ranks, mode, over):
    """Throughput of `mode` over that of `over` in one case, None when either is unknown."""
    entry = lambda m: summary_table.entry(summary, workload, ranks, m)  # noqa: E731
    return metrics.ratio(entry(mode).get("throughput_mbps"), entry(over).get("throughput_mbps"))


def link_is_bottleneck(link, device):
    """True when the link's bandwidth is below the device's; None when either is unknown."""
    if not link or not device or not link.get("bandwidth_mbps") or \
            not device.get("bandwidth_mbps"):
        return None
    return link["bandwidth_mbps"] < device["bandwidth_mbps"]


def evaluate(summary, workloads, rank_counts, link=None, device=None):
    measured = cases(summary, workloads, rank_counts)
    writes = [c for c in measured if is_write(c[0])]
    reads = [c for c in measured if not is_write(c[0])]
    return [_gain_over_plain(summary, writes, WRITE_GAIN, "Writes, close included"),
            _gain_over_plain(summary, reads, READ_GAIN, "Reads with prefetching"),
            _second_tier(summary, measured, link, device)]


def _case(workload, ranks):
    return f"{workload} at {ranks} ranks"


def _gain_over_plain(summary, measured, gain, what):
    target = f"{what}: I/O throughput with stagio-iond ≥ {gain:g}x plain MPI-IO's"
    shown = []
    for workload, ranks in measured:
        iond = throughput_gain(summary, workload, ranks, IOND, PLAIN)
        if iond is None:
            continue
        client = throughput_gain(summary, workload, ranks, CLIENT, PLAIN)
        text = f"{_case(workload, ranks)}: iond {iond:.1f}x" + \
            ("" if client is None else f" (client alone {client:.1f}x)")
        shown.append((text, iond >= gain))
    return verdicts.every_case(target, shown, "no case with plain and iond measured")


def _second_tier(summary, measured, link, device):
    target = (f"The second tier adds a gain when the link is the bottleneck: iond's throughput "
              f"≥ {TIER_GAIN:.2f}x the client tier's alone")
    bottleneck = link_is_bottleneck(link, device)
    if not bottleneck:
        why = "no link" if bottleneck is None else (
            f"this run's link ({link['bandwidth_mbps']:g} MB/s) is not slower than the device "
            f"({device['bandwidth_mbps']:g} MB/s); run with --link-bottleneck")
        gains = [throughput_gain(summary, w, r, IOND, CLIENT) for w, r in measured]
        shown = ", ".join(f"{g:.2f}x" for g in gains if g is not None)
        return Verdict(target, why + (f" (iond / client here: {shown})" if shown else ""), None)
    shown = []
    for workload, ranks in measured:
        gain = throughput_gain(summary, workload, ranks, IOND, CLIENT)
        if gain is not None:
            shown.append((f"{_case(workload, ranks)}: {gain:.2f}x", gain >= TIER_GAIN))
    return verdicts.every_case(target, shown, "no case with client and iond measured",
                               prefix="iond / client: ")
