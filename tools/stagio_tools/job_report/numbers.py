"""The report's tables, as rows of formatted text: the terminal summary and the HTML page show
the same numbers, so they come from here."""

from .. import markdown

fmt_bytes, fmt_percent = markdown.fmt_bytes, markdown.fmt_percent


def fmt_s(value):
    return markdown.NA if value is None else f"{value:.3f} s"


def storage_name(job):
    """What stagio's storage requests reached: the daemons, when the job had some."""
    return "stagio-iond daemons" if job.setting("stagio_iond") else "storage"


def job_rows(job):
    """(label, value) pairs for the job as a whole."""
    total = job.total
    hosts = job.hosts
    share = job.blocked_share
    return [
        ("ranks", f"{len(job.ranks)} on {len(hosts)} host{'s' if len(hosts) != 1 else ''}"
         if hosts else str(len(job.ranks))),
        ("run time (slowest rank)", fmt_s(job.run_s)),
        ("time in MPI-IO calls, summed over ranks",
         fmt_s(total.blocked_s) + (f" ({fmt_percent(share)} of the ranks' time)"
                                   if share is not None else "")),
        ("of it in reads", fmt_s(total.read_blocked_s)),
        ("read by the program", f"{fmt_bytes(total.read_bytes)} in {total.read_calls} calls"),
        ("written by the program", f"{fmt_bytes(total.write_bytes)} in {total.write_calls} calls"),
        (f"read from {storage_name(job)}",
         f"{fmt_bytes(total.get('storage_read_bytes'))} in {total.get('storage_reads')} requests"),
        (f"written back to {storage_name(job)}",
         f"{fmt_bytes(total.get('dirty_bytes_flushed'))} in {total.get('storage_writes')} "
         f"requests, {total.get('write_back_errors')} errors"),
        ("straight to storage (direct path)",
         f"{fmt_bytes(total.get('direct_bytes'))} in {total.get('direct_calls')} calls"),
        ("exchanged between ranks", fmt_bytes(total.get("exchanged_bytes"))),
        ("cache hit ratio", f"{fmt_percent(total.hit_ratio)} ({total.get('cache_hits')} hits, "
                            f"{total.get('cache_misses')} misses)"),
        ("prefetched blocks", f"{total.get('prefetch_issued')}: {total.get('prefetch_used')} used "
                              f"({total.get('prefetch_late')} late), "
                              f"{total.get('prefetch_wasted')} wasted"),
        ("prefetch accuracy / coverage", f"{fmt_percent(total.accuracy)} / "
                                         f"{fmt_percent(total.coverage)}"),
        ("calls passed through to MPI-IO", str(total.get("passthrough_calls"))),
    ]


FILE_HEADER = ("file", "read", "written", "hit ratio", "accuracy", "coverage",
               "from storage", "written back", "in calls")


def file_rows(job, count=None):
    """One row per file, the busiest first (all of them, or `count`)."""
    files = job.busiest_files(count if count is not None else len(job.files))
    return [(name, fmt_bytes(r.read_bytes), fmt_bytes(r.write_bytes), fmt_percent(r.hit_ratio),
             fmt_percent(r.accuracy), fmt_percent(r.coverage),
             fmt_bytes(r.get("storage_read_bytes")), fmt_bytes(r.get("dirty_bytes_flushed")),
             fmt_s(r.blocked_s)) for name, r in files]


RANK_HEADER = ("rank", "host", "run time", "in MPI-IO calls", "share", "read", "written")


def rank_rows(job):
    return [(str(r.rank), r.host or markdown.NA, fmt_s(r.run_s), fmt_s(r.total.blocked_s),
             fmt_percent(r.blocked_share), fmt_bytes(r.total.read_bytes),
             fmt_bytes(r.total.write_bytes)) for r in job.ranks]


# (label, value of a Job, format, whether less is better) for the side-by-side comparison.
_COMPARED = (
    ("run time (slowest rank)", lambda j: j.run_s, fmt_s, True),
    ("time in MPI-IO calls", lambda j: j.total.blocked_s, fmt_s, True),
    ("of it in reads", lambda j: j.total.read_blocked_s, fmt_s, True),
    ("read by the program", lambda j: j.total.read_bytes, fmt_bytes, None),
    ("written by the program", lambda j: j.total.write_bytes, fmt_bytes, None),
    ("read from storage", lambda j: j.total.get("storage_read_bytes"), fmt_bytes, None),
    ("storage read requests", lambda j: j.total.get("storage_reads"), str, None),
    ("cache hit ratio", lambda j: j.total.hit_ratio, fmt_percent, False),
    ("prefetch accuracy", lambda j: j.total.accuracy, fmt_percent, False),
    ("prefetch coverage", lambda j: j.total.coverage, fmt_percent, False),
    ("write-back errors", lambda j: j.total.get("write_back_errors"), str, True),
)

COMPARE_HEADER = ("", "A", "B", "B / A")


def compare_rows(first, second):
    rows = []
    for label, value, fmt, _ in _COMPARED:
        a, b = value(first), value(second)
        ratio = f"{b / a:.2f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and a else markdown.NA
        rows.append((label, fmt(a) if a is not None else markdown.NA,
                     fmt(b) if b is not None else markdown.NA, ratio))
    return rows


def compare_verdict(first, second):
    """One line: which run was faster, by how much."""
    a, b = first.run_s, second.run_s
    if not a or not b:
        a, b = first.total.blocked_s, second.total.blocked_s
        what = "time in MPI-IO calls"
        if not a or not b:
            return "Neither file has run times to compare (stats from stagio before 0.6)."
    else:
        what = "run time"
    if abs(b / a - 1) < 0.03:
        return f"B's {what} is A's within 3% ({fmt_s(b)} against {fmt_s(a)})."
    faster = "B" if b < a else "A"
    return f"{faster} is faster: {what} {fmt_s(b)} against {fmt_s(a)} (B takes {b / a:.2f}x A's)."
