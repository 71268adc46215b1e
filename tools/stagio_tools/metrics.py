"""The numbers a benchmark report is made of: medians, ratios, overlap efficiency.

Pure functions on plain floats. A value that cannot be computed is None (shown as "n/a"), never
an exception: a report with one missing mode must still show every other number.
"""

import statistics


def median(values):
    """Median of the values, or None for none. The architecture asks for medians of >= 5 runs:
    one slow run (a noisy neighbour, a page-cache hiccup) must not move the result."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(values):
    """(median, min, max) of the values, all None when there are none."""
    values = [v for v in values if v is not None]
    if not values:
        return None, None, None
    return statistics.median(values), min(values), max(values)


def ratio(numerator, denominator):
    """numerator / denominator, or None when either is missing or the denominator is not > 0."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def speedup_bound(t_plain, t_ideal, t_transfer):
    """T_plain / max(T_ideal, T_transfer): the most any mode can gain over plain MPI-IO. It can
    hide I/O behind compute, but not move the bytes faster than the device does: when the
    transfer time alone exceeds the compute time, the device is the bound. T_transfer may be
    None (unknown): then the bound is the compute-only one."""
    floor = max(t for t in (t_ideal, t_transfer) if t is not None) \
        if t_ideal is not None or t_transfer is not None else None
    return ratio(t_plain, floor)


def overlap_efficiency(t_plain, t_mode, t_ideal):
    """(T_plain - T_mode) / (T_plain - T_ideal): the share of the I/O time that a mode hid.

    1 means all I/O was hidden (the mode ran as fast as compute alone), 0 means nothing was
    gained, negative means the mode was slower than plain MPI-IO. None when a time is missing or
    when T_plain <= T_ideal: then there was no I/O time to hide and the quotient means nothing.
    """
    if t_plain is None or t_mode is None or t_ideal is None or t_plain <= t_ideal:
        return None
    return (t_plain - t_mode) / (t_plain - t_ideal)


def io_throughput_mbps(result):
    """Bytes a run read and wrote over its time in MPI-IO calls (a result line's io_s: the
    slowest rank's, open and close included), MB/s; None when unknown or no time was spent."""
    moved = [result.get(k) for k in ("bytes_read", "bytes_written")]
    seconds = result.get("io_s")
    if any(m is None for m in moved) or not seconds or seconds <= 0:
        return None
    return sum(moved) / seconds / 1e6
