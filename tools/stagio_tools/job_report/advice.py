"""What the numbers mean for the person who ran the job: findings, each a sentence with the
numbers behind it, and the one-line verdict.

Each rule looks at the job's total (and at each busy file for the ones a single file can
cause) and speaks only when its numbers are large enough to matter: a finding a user cannot
act on is a note, one they can is an action, one that means data may be missing an error.
The verdict is the first error, else the first action, else a line saying what went well.
"""

from dataclasses import dataclass

from .. import markdown

ERROR, ACTION, NOTE = "error", "action", "note"
_ORDER = {ERROR: 0, ACTION: 1, NOTE: 2}

# Below these, a share says little: too few blocks or reads to judge by.
MIN_PREFETCHED = 20
MIN_READS = 50
WASTED_SHARE = 0.2
LATE_SHARE = 0.5
RANDOM_HIT_RATIO = 0.5
RANDOM_COVERAGE = 0.2
DIRECT_SHARE = 0.5
BLOCKED_SHARE = 0.5
IMBALANCE = 1.5
MIN_BLOCKED_S = 0.05


@dataclass
class Finding:
    severity: str
    text: str       # one line, with its numbers
    scope: str = ""  # "" for the job, else a file's path


def findings(job):
    """Every finding for the job, most severe first."""
    found = []
    total = job.total
    found += _write_back_errors(total, job)
    found += _prefetch_findings(total, job)
    found += _random_reads(job)
    if total.get("passthrough_calls"):
        found.append(Finding(NOTE, f"{total.get('passthrough_calls')} calls went straight to "
                                   "MPI-IO, uncached: shared file pointers, atomic mode or "
                                   "ordered collectives, which stagio passes through"))
    direct = total.get("direct_bytes")
    if total.moved_bytes and direct / total.moved_bytes >= DIRECT_SHARE:
        found.append(Finding(NOTE, f"{markdown.fmt_bytes(direct)} of "
                                   f"{markdown.fmt_bytes(total.moved_bytes)} moved went straight "
                                   "to storage (the direct path): large transfers or storage as "
                                   "fast as memory, where a cache would only add a copy"))
    share = job.blocked_share
    if share is not None and share >= BLOCKED_SHARE:
        found.append(Finding(NOTE, f"the ranks spent {markdown.fmt_percent(share)} of their run "
                                   "time in MPI-IO calls: with little computation between them "
                                   "there is little to hide storage behind"))
    imbalance = job.imbalance()
    if imbalance and imbalance[1] >= IMBALANCE and imbalance[0].total.blocked_s >= MIN_BLOCKED_S:
        rank, ratio = imbalance
        found.append(Finding(NOTE, f"rank {rank.rank} spent {rank.total.blocked_s:.2f} s in "
                                   f"MPI-IO calls, {ratio:.1f} times the ranks' mean: the I/O is "
                                   "uneven, and the others may wait for it"))
    if total.get("preexec_dropped"):
        found.append(Finding(NOTE, f"{total.get('preexec_dropped')} pre-execution helper calls "
                                   "were dropped (bad arguments, unknown or closed files, failed "
                                   "fetches); the helper's slice may not match the program"))
    return sorted(found, key=lambda f: _ORDER[f.severity])


def verdict(job, found=None):
    """One line a user can act on."""
    found = findings(job) if found is None else found
    for severity in (ERROR, ACTION):
        for finding in found:
            if finding.severity == severity:
                return finding.text[:1].upper() + finding.text[1:] + "."
    total = job.total
    if total.read_calls and total.hit_ratio is not None:
        line = f"stagio served {markdown.fmt_percent(total.hit_ratio)} of block reads from " \
               "its cache"
        if total.coverage is not None and total.get("prefetch_issued"):
            line += f", and prefetching made {markdown.fmt_percent(total.coverage)} of the " \
                    "storage reads ahead of time"
        return line + ": nothing to change."
    if total.write_calls:
        return f"stagio wrote {markdown.fmt_bytes(total.get('dirty_bytes_flushed'))} back " \
               "behind the program: nothing to change."
    return "The job made no MPI-IO call that stagio served."


def _write_back_errors(total, job):
    errors = total.get("write_back_errors")
    if not errors:
        return []
    where = [name for name, record in job.files.items() if record.get("write_back_errors")]
    return [Finding(ERROR, f"{errors} write-back requests failed: some data may not have "
                           f"reached storage ({', '.join(where[:3]) or 'see stderr'}); the "
                           "program got the error at its next sync or close")]


def _prefetch_findings(total, job):
    issued = total.get("prefetch_issued")
    if issued < MIN_PREFETCHED:
        return []
    found = []
    wasted = total.wasted_share or 0
    if wasted >= WASTED_SHARE:
        if total.get("cache_evictions"):
            size = job.setting("stagio_cache_size") or "its current value"
            found.append(Finding(ACTION, f"raise stagio_cache_size (now {size}): "
                                         f"{markdown.fmt_percent(wasted)} of prefetched blocks "
                                         "were evicted unused"))
        else:
            found.append(Finding(ACTION, f"{markdown.fmt_percent(wasted)} of prefetched blocks "
                                         "were never read: the reads left the predicted "
                                         "pattern; set stagio_prefetch=none for files read "
                                         "without one, or describe the reads with the "
                                         "pre-execution API"))
    late = total.late_share or 0
    if late >= LATE_SHARE and total.get("prefetch_used") >= MIN_PREFETCHED:
        ahead = job.setting("stagio_prefetch_max") or "its current value"
        found.append(Finding(ACTION, f"raise stagio_prefetch_max (now {ahead}): "
                                     f"{markdown.fmt_percent(late)} of the prefetched blocks "
                                     "used were still on their way when read"))
    return found


def _random_reads(job):
    """Files read often, mostly missing, with prefetching covering little: no pattern."""
    found = []
    for name, record in job.busiest_files(10):
        hits, coverage = record.hit_ratio, record.coverage
        if record.read_calls < MIN_READS or hits is None or hits >= RANDOM_HIT_RATIO:
            continue
        if coverage is not None and coverage >= RANDOM_COVERAGE:
            continue
        found.append(Finding(NOTE, f"{name}: {record.read_calls} reads follow no pattern stagio "
                                   f"can predict (hit ratio {markdown.fmt_percent(hits)}, "
                                   f"prefetch coverage {markdown.fmt_percent(coverage)}); a "
                                   "pre-execution slice (stagio-slice) can tell it what comes "
                                   "next", scope=name))
    return found
