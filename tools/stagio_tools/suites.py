"""Benchmark suites: which workloads, modes and rank counts one `stagio bench` run compares,
and which report shows them.

  default     every single-file workload of the first benchmarks, 4 ranks, the cache alone
              and with prefetching (`stagio`, `stagio-prefetch`); per-mode tables (report.py)
  collective  collective reads (pio-bench with read_at_all, overlapping tiles) at 2-16 ranks,
              individual against collective prefetching, both on the collective cache;
              speed-up against rank count and the issue's targets (scaling_report.py)
  preexec     the pre-execution examples at 1-8 ranks: plain, stagio without a helper, PP and
              PPIS, against the optimum (reads skipped); time and share of the bound against
              rank count, and issue 5's targets (preexec_report.py)
  preexec-slice  the examples whose helper stagio-slice generates, beside their hand-written
              slice, at 1-4 ranks: plain and PPIS; the generated helper's time against the
              hand-written one's (slice_report.py)
  iond        seed 004's SimParIO and BTIO with 500 ms compute phases: plain, the client tier
              alone and with a stagio-iond, all across the same emulated link; I/O throughput
              and issue 6's targets (iond_report.py)
  iond-sweep  SimParIO writes over client x daemon water marks and cache sizes (seed 004 Fig. 6
              and 9; iond_sweep_report.py)
  segstore    a viewer's repeated passes over overlapping non-contiguous windows (zoom, tiles)
              and a read-once scan, on a device with a seek per request: plain, stagio with a
              stagio-iond, and with the daemon's segment store (seed 002; segstore_report.py)
  node        interleaved records that every rank's blocks share, on a slow device, at 2 and 4
              ranks: per-rank caching, the collective cache (individual and collective
              prefetching) and the node cache (stagio's defaults); per-mode tables
  overhead    what stagio costs where it cannot help, at 1, 2 and 4 ranks: IOR-like streaming
              (shared and one open per rank), small strided transfers, random reads and many
              small files, with no compute and no emulated device (the real file system of
              --workdir: the local disk, or tmpfs with --workdir /dev/shm/...); per-mode tables

A suite is a starting point, not a fence: the command line may name other workloads, modes or
rank counts, and the suite's report shows whatever was run.
"""

from dataclasses import dataclass

from . import iond_modes
from . import launch
from . import named_rows
from . import workloads as table

# The kinds of report (see report.py, scaling_report.py and preexec_report.py).
PER_MODE = "per-mode"
SCALING = "scaling"
PREEXEC = "preexec"
IOND = "iond"
IOND_SWEEP = "iond-sweep"
SEGSTORE = "segstore"
SLICE = "slice"

# The iond suites' link (launch.Link): a real cost, 1 ms each way, yet twice the device's
# bandwidth (5 ms, 200 MB/s), so the storage stays the slower part; with --link-bottleneck a
# quarter of it, so that the link is (seed 004's case for the second tier).
IOND_LINK = launch.Link(latency_ms=1.0, bandwidth_mbps=400.0)
BOTTLENECK_LINK = launch.Link(latency_ms=1.0, bandwidth_mbps=50.0)
# Every daemon of the iond suite: seed 004's 512 MiB I/O-node cache; the rest its defaults.
IOND_DAEMON_ARGS = ("--cache-size", "512M")


@dataclass(frozen=True)
class Suite:
    name: str
    workloads: tuple          # workload names, the suite's `all`
    modes: tuple              # mode names, the default of --modes
    rank_counts: tuple        # the default of --ranks-list
    quick_rank_counts: tuple  # the same under --quick
    report: str               # PER_MODE, SCALING, PREEXEC, IOND, IOND_SWEEP or SEGSTORE
    description: str
    reps: int = 5             # the default of --reps
    quick_reps: int = 5       # the same under --quick
    device: launch.Device = launch.Device()  # the default of --latency-ms, ... (5 ms, 200 MB/s, 8)
    link: launch.Link = None             # the link every run crosses (iond suites), or none
    bottleneck_link: launch.Link = None  # the same with --link-bottleneck
    iond_args: tuple = ()                # options every stagio-iond of the run gets


SUITES = (
    Suite("default",
          workloads=("pbench", "pio-strided-1m", "pio-strided-4m", "pio-nested",
                     "simpario-read", "simpario-write", "topk", "hill", "random"),
          modes=("ideal", "plain", "stagio", "stagio-prefetch"),
          rank_counts=(4,), quick_rank_counts=(4,), report=PER_MODE,
          description="single-file workloads at 4 ranks: cache and individual prefetching"),
    # --quick keeps the small rank counts: with more ranks than the machine's 2 cores, each
    # collective call costs MPI start-up and polling time that a check of the pipeline need not
    # pay; name them with --ranks-list to check the plots' scaling axis too.
    Suite("collective",
          workloads=("coll-strided-1m", "coll-strided-4m", "coll-nested", "tile-overlap"),
          modes=("ideal", "plain", "stagio-individual", "stagio-collective"),
          rank_counts=(2, 4, 8, 16), quick_rank_counts=(2, 4), report=SCALING,
          description="collective reads at 2-16 ranks: individual vs collective prefetching"),
    # The node cache against the other ways ranks that share blocks can cache them. About 4
    # minutes; the device is the bottleneck (workloads.SHARED_DEVICE).
    Suite("node",
          workloads=("shared-interleaved",),
          modes=("ideal", "plain", "stagio-per-rank", "stagio-individual", "stagio-collective",
                 "stagio-prefetch"),
          rank_counts=(2, 4), quick_rank_counts=(2,), report=PER_MODE, reps=3, quick_reps=1,
          device=table.SHARED_DEVICE,
          description="ranks sharing blocks on a slow device at 2 and 4 ranks: the node cache "
                      "against per-rank caching and the collective cache"),
    # 3 reps (not 5) keep the 360 runs within ~25 minutes; --quick is a check of the pipeline,
    # one rep at 1 and 2 ranks. The device has room for 8 ranks' helpers (workloads.py).
    # Runs of 10-400 ms on a noisy machine: 5 reps, about 6 minutes on the local disk (MPICH,
    # most of it opening files at 4 ranks); --quick runs 2 ranks, 3 reps, fewer segments, reads
    # and files.
    Suite("overhead",
          workloads=tuple(w.name for w in table.OVERHEAD_WORKLOADS),
          modes=("plain-fast", "stagio-fast"),
          rank_counts=(1, 2, 4), quick_rank_counts=(2,), report=PER_MODE, reps=5, quick_reps=3,
          description="what stagio costs with nothing to hide (real file system, no compute): "
                      "IOR-like streaming, small strided transfers, random reads, many files"),
    Suite("preexec",
          workloads=tuple(w.name for w in table.PREEXEC_WORKLOADS),
          modes=("ideal", "plain", "stagio-off", "pp", "ppis"),
          rank_counts=(1, 2, 4, 8), quick_rank_counts=(1, 2), report=PREEXEC,
          description="pre-execution examples at 1-8 ranks: no helper vs PP vs PPIS",
          reps=3, quick_reps=1, device=table.PREEXEC_DEVICE),
    # 8 workloads x 2 modes x 3 rank counts x 5 reps of 1.5-3 s: about 13 minutes.
    Suite("preexec-slice",
          workloads=tuple(name for w in table.PREEXEC_SLICED_WORKLOADS
                          for name in (w.name[:-len(table.SLICED_SUFFIX)], w.name)),
          modes=("plain", "ppis"), rank_counts=(1, 2, 4), quick_rank_counts=(1, 2),
          report=SLICE, reps=5, quick_reps=1, device=table.PREEXEC_DEVICE,
          description="the generated helpers beside the hand-written ones: plain vs PPIS"),
    # 4 cases (BTIO at 4 and 8 ranks) x 3 modes x 5 reps of ~12 s: about 15 minutes; --quick
    # 4 short phases at 4 ranks, 1 rep, about a minute.
    Suite("iond",
          workloads=("iond-simpario-write", "iond-simpario-read", "iond-btio-write"),
          modes=("plain", "client", "iond"), rank_counts=(4, 8), quick_rank_counts=(4,),
          report=IOND, quick_reps=1, link=IOND_LINK, bottleneck_link=BOTTLENECK_LINK,
          iond_args=IOND_DAEMON_ARGS,
          description="SimParIO and BTIO, 500 ms compute: plain vs client tier vs client + "
                      "stagio-iond, across one emulated link"),
    # 42 points x 3 reps of ~6 s: about 13 minutes; --quick 6 short phases, 1 rep.
    Suite("iond-sweep", workloads=("iond-sweep-simpario-write",),
          modes=("plain", "client") + tuple(m.name for m in iond_modes.SWEEP_MODES),
          rank_counts=(4,), quick_rank_counts=(4,), report=IOND_SWEEP, reps=3, quick_reps=1,
          link=IOND_LINK, bottleneck_link=BOTTLENECK_LINK,
          description="SimParIO writes over client x daemon water marks and cache sizes"),
)

# The segment store's suite. The daemon's cache is 16 MiB, less than one zoom pass spans (64
# MiB of rows): the case the store is for, data read again that the I/O node's memory does not
# hold. (Each pass opens the file anew, and the daemon drops a file's blocks when its last
# client closes it, so even the default 512 MiB would serve no pass from an earlier one.) 3 workloads x 3 modes x 3 reps, ~40 s a run with the pauses:
# about 15 minutes; --quick one rep of 3 passes, about 2 minutes.
SUITES += (
    Suite("segstore", workloads=tuple(w.name for w in table.SEGSTORE_WORKLOADS),
          modes=("plain", "stagio-iond", "stagio-segstore"), rank_counts=(4,),
          quick_rank_counts=(4,), report=SEGSTORE, reps=3, quick_reps=1,
          device=table.SEGSTORE_DEVICE, iond_args=("--cache-size", "16M"),
          description="a viewer's repeated overlapping non-contiguous reads and a read-once "
                      "scan: plain vs stagio-iond vs stagio-iond with its segment store"),
)

SUITE_NAMES = tuple(s.name for s in SUITES)
DEFAULT_SUITE = "default"


def suite_by_name(name):
    return named_rows.find(SUITES, name)


def suite_of(results):
    """The suite a results dictionary was made by; results.json files written before suites
    existed are the default suite's."""
    name = results.get("settings", {}).get("suite", DEFAULT_SUITE)
    return suite_by_name(name if name in SUITE_NAMES else DEFAULT_SUITE)

