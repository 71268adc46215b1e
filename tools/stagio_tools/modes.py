"""The ways the harness runs a workload, from the compute-only bound to stagio with
prefetching. A report compares them within one harness run, so they differ only in what is
listed here: the same program, arguments, ranks and emulated device otherwise. Each suite
(suites.py) picks the modes it compares.
"""

from . import iond_modes
from . import segstore_modes
from . import named_rows
from .mode_row import Mode


# The collective suite compares two ways of predicting with the collective cache on, which
# takes the node cache (the default) off: the modes say so, so that a default changed later
# cannot silently change what they measure.
_COLLECTIVE_CACHE = (("STAGIO_NODE_CACHE", "disable"), ("STAGIO_COLLECTIVE_CACHE", "enable"))

# The pre-execution suite's three stagio modes differ in STAGIO_PREEXEC alone: the same binary,
# cache and pattern prefetching (STAGIO_PREFETCH=auto, the default, set so that a default
# changed later cannot change what they measure), with no helper thread, PP or PPIS.
def _preexec(value):
    return (("STAGIO_PREEXEC", value),)


MODES = (
    Mode("ideal", skip_io=True, emulated=False, stagio=False,
         description="--skip-io, no stagio: compute alone, all I/O hidden (T_ideal); for the "
                     "pre-execution examples --skip-reads, their writes made on the emulated "
                     "device (T_ideal = compute + writes)"),
    Mode("plain", skip_io=False, emulated=True, stagio=False,
         description="plain MPI-IO on the emulated device (the baseline T_plain)"),
    Mode("stagio", skip_io=False, emulated=True, stagio=True, prefetch="none",
         description="libstagio.so preloaded, STAGIO_PREFETCH=none: cache and write-back only"),
    Mode("stagio-prefetch", skip_io=False, emulated=True, stagio=True, prefetch="auto",
         description="libstagio.so preloaded, STAGIO_PREFETCH=auto"),
    Mode("stagio-individual", skip_io=False, emulated=True, stagio=True, prefetch="individual",
         settings=_COLLECTIVE_CACHE,
         description="libstagio.so preloaded, STAGIO_PREFETCH=individual: each rank predicts "
                     "its own reads (collective cache on, node cache off)"),
    Mode("stagio-collective", skip_io=False, emulated=True, stagio=True, prefetch="collective",
         settings=_COLLECTIVE_CACHE,
         description="libstagio.so preloaded, STAGIO_PREFETCH=collective: aggregators predict "
                     "from every rank's collective reads (collective cache on, node cache off)"),
    Mode("stagio-per-rank", skip_io=False, emulated=True, stagio=True, prefetch="individual",
         settings=(("STAGIO_NODE_CACHE", "disable"), ("STAGIO_COLLECTIVE_CACHE", "disable")),
         description="libstagio.so preloaded, STAGIO_PREFETCH=individual, node and collective "
                     "caches off: every rank caches and prefetches for itself"),
    Mode("stagio-nodes-apart", skip_io=False, emulated=True, stagio=True, prefetch="auto",
         settings=(("STAGIO_COLLECTIVE_CACHE", "disable"),),
         description="libstagio.so preloaded, STAGIO_PREFETCH=auto, collective cache off: each "
                     "node caches on its own and reads every block it needs from storage "
                     "(with STAGIO_NODE_SIZE, pretend nodes; by default one home node per block)"),
    # The overhead suite's: no emulated device, the real file system of --workdir.
    Mode("plain-fast", skip_io=False, emulated=False, stagio=False,
         description="plain MPI-IO on the real file system (no emulated device)"),
    Mode("stagio-fast", skip_io=False, emulated=False, stagio=True, prefetch="auto",
         description="libstagio.so preloaded with its defaults, on the real file system (no "
                     "emulated device)"),
    Mode("stagio-off", skip_io=False, emulated=True, stagio=True, prefetch="auto",
         settings=_preexec("off"),
         description="libstagio.so, STAGIO_PREEXEC=off: the cache and pattern prefetching, no "
                     "helper thread (the slice never runs)"),
    Mode("pp", skip_io=False, emulated=True, stagio=True, prefetch="auto", settings=_preexec("pp"),
         description="libstagio.so, STAGIO_PREEXEC=pp: the helper runs the I/O slice ahead and "
                     "fetches whenever it can, competing with the main thread"),
    Mode("ppis", skip_io=False, emulated=True, stagio=True, prefetch="auto",
         settings=_preexec("ppis"),
         description="libstagio.so, STAGIO_PREEXEC=ppis: as pp, but the helper starts no storage "
                     "request while the main thread is in an I/O call"),
)

MODES += iond_modes.MODES
MODES += segstore_modes.MODES
MODE_NAMES = tuple(mode.name for mode in MODES)

# Every other mode is compared with these two: its time against the baseline's (ratio), and the
# share of the baseline's I/O time it hid (overlap efficiency, which needs the bound). A run on
# the real file system (the overhead suite) has plain-fast for its baseline instead.
BASELINE = "plain"
FAST_BASELINE = "plain-fast"
BOUND = "ideal"


def baseline_among(names):
    """The baseline of a run whose modes are `names`: plain, or plain-fast in a run on the real
    file system that has no plain."""
    names = tuple(names)
    return FAST_BASELINE if FAST_BASELINE in names and BASELINE not in names else BASELINE


def is_compared(name):
    """True for the modes a report compares with the baseline and the bound (the stagio ones)."""
    return name not in (BASELINE, FAST_BASELINE, BOUND)


def mode_by_name(name):
    return named_rows.find(MODES, name)
