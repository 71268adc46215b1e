"""The table of benchmark workloads: which program, with which parameters, how much compute.

Each workload is a plain MPI program built to <build>/bench/bench_<program> (bench/workloads/).
A row fixes its sizes (plain byte counts), the option that sets how many I/O + compute phases
each rank does (`count_option`) with the full and --quick counts, and the compute time per
phase.

How the compute times were chosen. The papers' targets are stated for compute ≈ I/O: each
phase's compute should take about as long as the same phase's I/O takes with plain MPI-IO at 4
ranks on the default emulated device (5 ms per request, 200 MB/s shared, 8 in parallel). A 1 MiB
request alone costs 5 ms + 5.24 ms; when 4 ranks each read 1 MiB at once they share the
bandwidth, so the phase costs 10-26 ms. We started from 25 ms for the 1 MiB-per-phase workloads,
scaled by bytes per phase for the others, and checked the estimates against plain runs at 4
ranks with --compute-ms 0 (I/O only; `io_s` / phases):
    1 MiB per phase (pbench, pio-*, simpario-*): 23 ms   -> 25 ms
    topk (1 MiB, plus ~4 ms of its own top-k work):  20 ms  -> 20 ms
    hill (768 KiB read + 768 KiB write):             36 ms  -> 35 ms
    random (4 KiB-1 MiB, ~0.5 MiB mean):             13 ms  -> 13 ms
With compute phases in between, the ranks drift apart and contend less for the bandwidth, so a
plain run ends up spending about half as long on I/O as on compute (T_plain ≈ 1.5 T_ideal):
that I/O time is what the stagio modes can hide. To change one workload's compute time, edit
its compute_ms below; to override all of them for one run, use `stagio bench --compute-ms X`.

Run length. A full `all` run is 9 workloads x 4 modes x 5 reps = 180 runs and must stay within
~25 minutes: every workload does ~100 phases (~2.5 s of compute; 12-15 minutes in all).
--quick does 8, to check the whole pipeline in under 3 minutes.
"""

from dataclasses import dataclass, replace
import hashlib
import os

from . import launch
from . import named_rows

SKIP_IO = "--skip-io"
KIB = 1024
MIB = 1024 * KIB


def options(**values):
    """options(record=MIB, inner_stride=MIB) -> ("--record", "1048576", "--inner-stride", ...)."""
    args = []
    for name, value in values.items():
        args += ["--" + name.replace("_", "-"), str(value)]
    return tuple(args)


@dataclass(frozen=True)
class Workload:
    name: str
    program: str                 # executable under <build>/bench/
    args: tuple                  # parameters shared by full and --quick runs
    count_option: str            # the option giving the number of phases per rank
    count: int                   # full runs
    quick_count: int             # --quick runs
    compute_ms: float            # per phase: ≈ plain MPI-IO time per phase at 4 ranks
    description: str
    reads_input: bool = True     # needs an input file made with --create-input before timing
    output_option: str = ""      # option naming the file it writes; deleted after each run
    verify_option: str = ""      # option that checks the written data after the timed part
    count_sizes_input: bool = True    # False when the input's size does not depend on count
    program_dir: str = "bench"        # where the program is built, under the build directory
    # The pre-execution examples call stagio's API, so they are linked to libstagio.so: the
    # modes without stagio run them with STAGIO_DISABLE=1 (every MPI-IO call plain PMPI).
    links_stagio: bool = False
    # What the `ideal` mode passes: --skip-io (no I/O at all), or --skip-reads for the
    # pre-execution examples, whose optimum still makes the writes (seed 003, eq. 4).
    ideal_option: str = SKIP_IO
    # The emulated device the workload is defined on (the saturated ones); None: the run's.
    device: launch.Device = None
    # (STAGIO_X, value) pairs every stagio mode of this workload runs with, alike for all.
    stagio_settings: tuple = ()
    # The rank counts it runs at, when not every one of the run's (empty: all of them).
    ranks: tuple = ()
    # Compute per phase under --quick, when not compute_ms (the iond suites' short runs).
    quick_compute_ms: float = None

    def runs_at(self, ranks):
        return not self.ranks or ranks in self.ranks

    def parameters(self, quick):
        """The workload's own parameters (no files, compute or mode options)."""
        return self.args + (self.count_option, str(self.quick_count if quick else self.count))

    def input_parameters(self, quick):
        """The parameters that shape the input file."""
        return self.parameters(quick) if self.count_sizes_input else self.args


PHASES = 100
QUICK_PHASES = 8

# The collective suite's rows (below the default suite's). The same rule for compute: ≈ the
# I/O time of a phase with plain MPI-IO at 4 ranks, measured with --compute-ms 0 (io_s /
# phases, median of 3 reps of 64 phases). Open MPI 4.1 (OMPIO): 49-51 ms for the pio-bench
# workloads, 43 ms for the tiles -> 50 and 45 ms. MPICH 4.0.2 measured 36 and 104 ms, but its
# ranks busy-poll on the 2-core VM, so its collective calls cost what the machine's
# oversubscription costs rather than what the storage does; Open MPI's numbers set the rule.
# The compute stays the same at 2-16 ranks. tools/README.md has the whole table.
# Run length: 4 workloads x 4 modes x 4 rank counts x 5 reps = 320 runs must stay within ~25
# minutes with MPICH, whose 16-rank collectives are slow: 24 phases (~25 min MPICH, ~15 min
# Open MPI); --quick does 8 at 2 and 4 ranks in about 3 minutes.
COLLECTIVE = ("--collective",)
COLLECTIVE_PHASES = 24
COLLECTIVE_NESTED_PHASES = 24  # whole groups of 3
COLLECTIVE_COMPUTE_MS = 50.0
TILE_COMPUTE_MS = 45.0

WORKLOADS = (
    Workload("pbench", "bench_pbench", options(rows=1024, cols=MIB // 8, seed=1), "--reads",
             PHASES, QUICK_PHASES, 25.0,
             "Random 1 MiB rows of a 1 GiB matrix: no pattern a predictor can find.",
             count_sizes_input=False),
    Workload("pio-strided-1m", "bench_piobench",
             options(pattern="strided", record=MIB, stride=MIB), "--records",
             PHASES, QUICK_PHASES, 25.0,
             "Strided 1 MiB records, 1 MiB gap, dealt round-robin to the ranks."),
    Workload("pio-strided-4m", "bench_piobench",
             options(pattern="strided", record=MIB, stride=4 * MIB), "--records",
             PHASES, QUICK_PHASES, 25.0,
             "Strided 1 MiB records, 4 MiB gap: a prefetched block must skip the gaps."),
    # Records per rank must be a multiple of the group (3) so every group is whole.
    Workload("pio-nested", "bench_piobench",
             options(pattern="nested", record=MIB, group=3, inner_stride=MIB,
                     outer_stride=3 * MIB), "--records",
             99, 9, 25.0,
             "Nested strided: groups of 3 x 1 MiB records, 1 MiB inner gap, 3 MiB outer gap."),
    Workload("simpario-read", "bench_simpario",
             options(mode="read", record=MIB, records_per_phase=1), "--phases",
             PHASES, QUICK_PHASES, 25.0,
             "SimParIO reads: one 1 MiB record per rank per phase, ranks sweep the file."),
    Workload("simpario-write", "bench_simpario",
             options(mode="write", record=MIB, records_per_phase=1), "--phases",
             PHASES, QUICK_PHASES, 25.0,
             "SimParIO writes: checkpoint-like, one 1 MiB record per rank per phase.",
             reads_input=False, output_option="--file", verify_option="--verify-output"),
    Workload("topk", "bench_chunked", options(app="topk", chunk=MIB, k=16), "--chunks",
             PHASES, QUICK_PHASES, 20.0,
             "Top-k search: each rank streams its own contiguous part in 1 MiB chunks."),
    # Reads 768 KiB and writes 768 KiB per phase: 1.5 MiB of I/O, two requests.
    Workload("hill", "bench_chunked", options(app="hill", chunk=768 * KIB), "--chunks",
             PHASES, QUICK_PHASES, 35.0,
             "Hill cipher: read a 768 KiB chunk, encrypt, write it to the output file.",
             output_option="--output", verify_option="--verify-output"),
    # Sizes uniform in 4 KiB..1 MiB: ~0.5 MiB per read on average.
    Workload("random", "bench_random",
             options(file_size=512 * MIB, min_size=4 * KIB, max_size=MIB, seed=1), "--reads",
             PHASES, QUICK_PHASES, 13.0,
             "Random offsets and sizes (4 KiB-1 MiB): what stagio costs when it cannot help.",
             count_sizes_input=False),
    # The collective suite (suites.py). COLLECTIVE makes every read an MPI_File_read_at_all
    # (bench_piobench) or MPI_File_read_all (bench_tileio), so ROMIO/OMPIO's own collective
    # buffering is the plain baseline and stagio's aggregators see every rank's reads.
    Workload("coll-strided-1m", "bench_piobench",
             options(pattern="strided", record=MIB, stride=MIB) + COLLECTIVE, "--records",
             COLLECTIVE_PHASES, QUICK_PHASES, COLLECTIVE_COMPUTE_MS,
             "pio-strided-1m with collective reads (read_at_all)."),
    Workload("coll-strided-4m", "bench_piobench",
             options(pattern="strided", record=MIB, stride=4 * MIB) + COLLECTIVE, "--records",
             COLLECTIVE_PHASES, QUICK_PHASES, COLLECTIVE_COMPUTE_MS,
             "pio-strided-4m with collective reads: the gaps are 4x the data."),
    Workload("coll-nested", "bench_piobench",
             options(pattern="nested", record=MIB, group=3, inner_stride=MIB,
                     outer_stride=3 * MIB) + COLLECTIVE, "--records",
             COLLECTIVE_NESTED_PHASES, 9, COLLECTIVE_COMPUTE_MS,
             "pio-nested with collective reads."),
    # 768 x 512 doubles: a 3 MiB frame; 2 x 2 tiles of 768 KiB at 4 ranks, 16 more elements
    # into each neighbour (about 850 KiB read); 192-280 KiB at 16 ranks, where a third of each
    # tile is border data a neighbour reads too.
    Workload("tile-overlap", "bench_tileio",
             options(rows=768, cols=512, elem_size=8, overlap=16) + COLLECTIVE, "--frames",
             COLLECTIVE_PHASES, QUICK_PHASES, TILE_COMPUTE_MS,
             "Overlapping 2-D tiles of 3 MiB frames (mpi-tile-io style), read_all per frame."),
    # The node suite (suites.py): the ranks' 64 KiB records interleave, so every 1 MiB block
    # holds records of every rank, on a device slow enough (SHARED_DEVICE) to be the
    # bottleneck: 2 ms of compute per record against 1.6 ms of device time per record and rank.
    # A block read once serves every rank; read once per rank, the device does P times the work.
    Workload("shared-interleaved", "bench_piobench",
             options(pattern="strided", record=64 * KIB, stride=0) + COLLECTIVE, "--records",
             400, QUICK_PHASES * 4, 2.0,
             "Interleaved 64 KiB records (read_at_all): ranks share every block; the device is "
             "the bottleneck (40 MB/s)."),
)

# The node suite's device: the default's latency and parallelism at a fifth of its bandwidth.
SHARED_DEVICE = launch.Device(latency_ms=5.0, bandwidth_mbps=40.0, parallel=8)

# ---- The pre-execution suite (suites.py: preexec; issue 5) ----------------------------------
#
# The examples of examples/preexec/ (built to <build>/examples/preexec_<name>): each program
# carries its I/O slice, written by hand against stagio's API, and runs plain (STAGIO_DISABLE=1),
# with stagio but no helper (STAGIO_PREEXEC=off), with PP and with PPIS on the same binary.
#
# Device. Their sizes are chosen for PREEXEC_DEVICE, the suite's default: the default suite's
# 5 ms and 200 MB/s, but 32 requests in parallel instead of 8. Under weak scaling with compute =
# read time (below), a rank whose helper runs ahead keeps one request in flight all the time, so
# 8 ranks keep 8 servers busy: the default device would saturate at exactly 8 ranks, and that is
# the saturated rows' job, not the normal rows'. With 64 KiB per request, 8 ranks use 8 x 0.33 ms
# of the channel per 5.33 ms step, half of it. (1 MiB per step, as in the default suite, would
# need 42 ms of the channel per 10 ms step at 8 ranks: every rank count above 2 would saturate.)
#
# Compute. The targets are stated for compute ≈ read time (seed 003, eq. 7: then PPIS can at
# most halve the run, T_ideal = T_plain / 2). So each step's compute is the device model's time
# for that step's reads alone on an idle device (tools/emulator/device_model.h): one latency per
# request plus the bytes over the bandwidth, read_ms() below: 5 + 65536 / 200e6 s = 5.33 ms for
# one 64 KiB request (pbench, topk, hill: one read per step), 10.08 ms for the two 8 KiB tiles of
# a tile-fft frame. Plain MPI-IO waits that long per step when its rank is alone on the device,
# a little longer when ranks collide. hill also writes 64 KiB per step, which the optimum makes
# too (on the emulated device), so its bound is T_ideal = compute + writes.
#
# Weak scaling. Rows, chunks and frames are counted per rank, so every rank count has the same
# work per rank and about the same run time. One exception: a rank's tile is one column of a
# frame as wide as the ranks, and plain MPI-IO reads a tile through the view by data sieving,
# the whole extent from its first to its last byte: 8 KiB at 1 rank, 64 KiB at 8. The tiles are
# small (32 x 32 doubles) so that 8 ranks still leave the channel half free.
#
# Length. A full sweep (360 runs: 6 workloads, 5 modes, 1-8 ranks, 3 reps) must fit in ~25
# minutes on 2 cores: 250 steps of 5.33 ms, T_ideal ~1.3 s and T_plain ~2.7 s (hill: ~2.7 and
# ~4 s; tile-fft: 64 frames of 10.08 ms, see TILE_FRAMES).
#
# Saturated rows (`-saturated`): the same programs on SATURATED_DEVICE, 50 MB/s and 2 requests
# in parallel, with the normal rows' compute. A 64 KiB request holds a server for 6.3 ms, so the
# device serves one every 3.2 ms: 59% busy with one rank reading every 5.33 ms, over capacity
# from 2 ranks on (4.7 times at 8 ranks). There the device, not the compute, bounds every mode,
# and how the helper's fetches compete with the main thread's I/O (PP) or wait for it (PPIS) is
# what differs (seed 003, Fig. 9: heavy I/O). Half as many steps, since each costs more.
PREEXEC_DEVICE = launch.Device(latency_ms=5.0, bandwidth_mbps=200.0, parallel=32)
SATURATED_DEVICE = launch.Device(latency_ms=5.0, bandwidth_mbps=50.0, parallel=2)
PREEXEC_REQUEST = 64 * KIB
PREEXEC_TILE = 32            # N: a tile is N x N doubles, 8 KiB
PREEXEC_STEPS = 250
PREEXEC_QUICK_STEPS = 16
# Each frame sets two views, and MPI_File_set_view is collective: with MPICH, whose ranks
# busy-poll, 8 ranks on 2 cores took 20 s for 125 frames that compute for 1.3 s (82 ms a
# frame, all modes alike, the optimum too). 64 frames keep that within the sweep's budget.
TILE_FRAMES = 64


# ---- The iond suites (suites.py: iond, iond-sweep; issue 6) ---------------------------------
#
# Seed 004's experiments (VI-B to VI-F): SimParIO with a 1 MiB record per rank per phase, and
# BTIO's collective solution writes, with compute phases of 500 ms, as issue 6's targets say.
# Seed 004 ran 40 phases; 20 keep the iond suite (4 cases x 3 modes x 5 reps = 60 runs of
# ~10 s of compute) within ~15 minutes. BTIO's grid is 64^3 cells (class A): a 10 MiB solution
# per step, 2.5 MiB per rank at 4 ranks, 1.25 MiB at 8. --quick: 8 phases of 100 ms.
# The sweep writes SimParIO's 40 phases, as seed 004 did, with 100 ms compute phases (not 500:
# it has 42 points), 6 phases of 20 ms under --quick.
IOND_PHASES = 20
IOND_QUICK_PHASES = 8
IOND_COMPUTE_MS = 500.0
IOND_QUICK_COMPUTE_MS = 100.0
SWEEP_PHASES = 40
SWEEP_QUICK_PHASES = 6
SWEEP_COMPUTE_MS = 100.0
SWEEP_QUICK_COMPUTE_MS = 20.0
BTIO_GRID = 64
_SIMPARIO_WRITE = dict(reads_input=False, output_option="--file", verify_option="--verify-output")

IOND_WORKLOADS = (
    Workload("iond-simpario-write", "bench_simpario",
             options(mode="write", record=MIB, records_per_phase=1), "--phases",
             IOND_PHASES, IOND_QUICK_PHASES, IOND_COMPUTE_MS,
             "SimParIO writes (seed 004 VI-B): a 1 MiB record per rank per phase, then compute.",
             ranks=(4, 8), quick_compute_ms=IOND_QUICK_COMPUTE_MS, **_SIMPARIO_WRITE),
    Workload("iond-simpario-read", "bench_simpario",
             options(mode="read", record=MIB, records_per_phase=1), "--phases",
             IOND_PHASES, IOND_QUICK_PHASES, IOND_COMPUTE_MS,
             "SimParIO reads (seed 004 VI-D): a 1 MiB record per rank per phase, then compute.",
             ranks=(4, 8), quick_compute_ms=IOND_QUICK_COMPUTE_MS),
    Workload("iond-btio-write", "bench_btio", options(mode="write", grid=BTIO_GRID), "--steps",
             IOND_PHASES, IOND_QUICK_PHASES, IOND_COMPUTE_MS,
             "BTIO full (seed 004 VI-F): compute, then one collective write_all of the 64^3 "
             "solution through subarray views; multi-partition at 4 ranks, 4x2 blocks at 8.",
             ranks=(4, 8), quick_compute_ms=IOND_QUICK_COMPUTE_MS, **_SIMPARIO_WRITE),
    Workload("iond-sweep-simpario-write", "bench_simpario",
             options(mode="write", record=MIB, records_per_phase=1), "--phases",
             SWEEP_PHASES, SWEEP_QUICK_PHASES, SWEEP_COMPUTE_MS,
             "SimParIO writes for the sweep (seed 004 VI-B, VI-C): 40 phases of a 1 MiB record "
             "per rank.", ranks=(4,), quick_compute_ms=SWEEP_QUICK_COMPUTE_MS,
             **_SIMPARIO_WRITE),
)


def read_ms(nbytes, requests=1, device=PREEXEC_DEVICE):
    """The device model's time for `requests` reads of `nbytes` in all on an idle device."""
    return round(requests * device.latency_ms + nbytes / (device.bandwidth_mbps * 1e6) * 1e3, 2)


# What every pre-execution example shares (see the Workload fields). The stagio modes run with
# stagio's defaults (the node cache at several ranks): they differ only in STAGIO_PREEXEC, so
# that they measure pre-execution. The cache block stays at its default (1 MiB): the helper
# fetches the bytes a read will want, not whole blocks. (Before the node cache these runs
# turned the collective cache off: with it, 3 blocks in 4 lived at another rank and every read
# was a round trip to that rank's block server.)
PREEXEC = dict(program_dir="examples", links_stagio=True, ideal_option="--skip-reads")


def _preexec(name, program, args, count_option, count, compute_ms, description, **more):
    return Workload(name, program, args, count_option, count, PREEXEC_QUICK_STEPS, compute_ms,
                    description, **PREEXEC, **more)


# 64 KiB rows of a 1 GiB matrix: 250 random rows per rank seldom repeat one (a cache hit).
_PBENCH = options(rows=16 * KIB, cols=PREEXEC_REQUEST // 8, seed=1)
# Two rounds of half the steps each: round 2 reads round 1's ciphertext back, so the helper's
# reads wait for the main thread's writes (dirty ranges). The program checks every read of
# round 2 against the hash of what round 1 wrote, so no --verify-output (untimed, but ~0.7 s
# per run of emulated reads).
_HILL = options(chunk=PREEXEC_REQUEST, key_size=8, rounds=2)
_ROW_MS = read_ms(PREEXEC_REQUEST)                   # 5.33
_FRAME_MS = read_ms(2 * 8 * PREEXEC_TILE ** 2, 2)    # 10.08

PREEXEC_WORKLOADS = (
    _preexec("preexec-pbench", "preexec_pbench", _PBENCH, "--reads", PREEXEC_STEPS, _ROW_MS,
             "PBench: random 64 KiB rows of a 1 GiB matrix, one read_at per row; no pattern "
             "for a predictor, the slice knows the rows.", count_sizes_input=False),
    _preexec("preexec-topk", "preexec_topk", options(chunk=PREEXEC_REQUEST, k=16), "--chunks",
             PREEXEC_STEPS, _ROW_MS,
             "Top-k search: each rank reads its own part in 64 KiB chunks, in order."),
    _preexec("preexec-hill", "preexec_hill", _HILL, "--chunks", PREEXEC_STEPS // 2, _ROW_MS,
             "Hill cipher: read a 64 KiB chunk, encrypt, write it to the output; round 2 "
             "encrypts the output again in place.", output_option="--output"),
    _preexec("preexec-tilefft", "preexec_tilefft", options(tile=PREEXEC_TILE), "--frames",
             TILE_FRAMES, _FRAME_MS,
             "Two 32 x 32 tiles of doubles per rank per frame, each read through a subarray "
             "view, FFT convolution."),
    _preexec("preexec-pbench-saturated", "preexec_pbench", _PBENCH, "--reads",
             PREEXEC_STEPS // 2, _ROW_MS,
             "preexec-pbench on a saturated device (50 MB/s, 2 requests in parallel).",
             device=SATURATED_DEVICE, count_sizes_input=False),
    _preexec("preexec-hill-saturated", "preexec_hill", _HILL, "--chunks", PREEXEC_STEPS // 4,
             _ROW_MS, "preexec-hill on a saturated device (50 MB/s, 2 requests in parallel).",
             device=SATURATED_DEVICE, output_option="--output"),
)

# The same examples with the helper stagio-slice built from their unsliced sources
# (examples/preexec/unsliced, built as examples/sliced/preexec_<name>): the slice suite runs
# them beside the hand-written ones.
SLICED_SUFFIX = "-sliced"
PREEXEC_SLICED_WORKLOADS = tuple(
    replace(w, name=w.name + SLICED_SUFFIX, program_dir="examples/sliced",
            description=w.description + " Helper generated by stagio-slice.")
    for w in PREEXEC_WORKLOADS
    if w.name in ("preexec-pbench", "preexec-topk", "preexec-hill", "preexec-tilefft"))

# ---- The overhead suite (suites.py: overhead) ------------------------------------------------
#
# What stagio costs where it cannot help: no compute to hide I/O behind and no emulated device
# (the modes plain-fast and stagio-fast run on the real file system of --workdir: the local disk
# by default, tmpfs with --workdir /dev/shm/...). The IOR rows are IOR's segmented layout with
# its usual sizes (-b 64m -t 4m -s 2: 512 MiB at 4 ranks; -b 200k -t 40k for small strided
# transfers, with 256 segments instead of IOR's 16 so that a run takes long enough to time),
# shared and with one open per rank (IOR -F). open-close opens, writes 1 KiB per rank to and
# closes 200 files: the fixed costs alone (1,000 took 50 s per run at 4 ranks under MPICH,
# whose collectives poll on 2 cores; the ratio to plain is the same).
_FILE_PER_PROCESS = ("--file-per-process",)
_LARGE = options(block=64 * MIB, transfer=4 * MIB)
_SMALL = options(block=200 * KIB, transfer=40 * KIB)


def _ior(name, mode, sizes, segments, quick_segments, description, extra=()):
    writes = mode == "write"
    return Workload(name, "bench_ior", options(mode=mode) + sizes + extra, "--segments",
                    segments, quick_segments, 0.0, description, reads_input=not writes,
                    output_option="--file" if writes else "",
                    verify_option="--verify-output" if writes else "")


OVERHEAD_WORKLOADS = (
    _ior("ior-write", "write", _LARGE, 2, 1,
         "IOR-like writes to a shared file: 64 MiB per rank per segment in 4 MiB calls."),
    _ior("ior-read", "read", _LARGE, 2, 1,
         "IOR-like reads of a shared file: 64 MiB per rank per segment in 4 MiB calls."),
    _ior("ior-write-fpp", "write", _LARGE, 2, 1,
         "ior-write with one open per rank (MPI_COMM_SELF), as IOR -F.", _FILE_PER_PROCESS),
    _ior("ior-read-fpp", "read", _LARGE, 2, 1,
         "ior-read with one open per rank (MPI_COMM_SELF), as IOR -F.", _FILE_PER_PROCESS),
    _ior("ior-small-write", "write", _SMALL, 256, 32,
         "Small strided writes: 200 KiB per rank per segment in 40 KiB calls."),
    _ior("ior-small-read", "read", _SMALL, 256, 32,
         "Small strided reads: 200 KiB per rank per segment in 40 KiB calls."),
    Workload("random-bare", "bench_random",
             options(file_size=512 * MIB, min_size=4 * KIB, max_size=MIB, seed=1), "--reads",
             PHASES, QUICK_PHASES, 0.0,
             "random with no compute: nothing to predict and nothing to hide behind.",
             count_sizes_input=False),
    Workload("open-close", "bench_openclose", options(size=KIB), "--files", 200, 50, 0.0,
             "200 files opened by every rank, 1 KiB written by each, closed.",
             reads_input=False, output_option="--file", verify_option="--verify-output"),
)

# ---- The segstore suite (suites.py: segstore) ----------------------------------------------
#
# A viewer's passes over a 2-D array (bench/workloads/bench_viewer.c): 512 rows of 256 KiB (a
# 128 MiB file, 32768 elements of 8 bytes a row), each pass a new open of the file, a subarray
# view of this rank's part of the window, one read and a close, then a pause: the user looking.
#   zoom   noncontig-style: 256 rows x 64 KiB, 128 x 128 KiB, 64 x 256 KiB (16 MiB each, the
#          rows spanning 64, 32 and 16 MiB of the file), twice round: 6 passes.
#   tiles  mpi-tile-io: a 192-row x 128 KiB window in 2 x 2 overlapping tiles (16 elements of
#          overlap), moving down 16 rows a pass: 6 passes, each 92% of the one before.
#   scan   read once: 4 bands of 128 rows, 64 KiB of each row, no pause: nothing read twice.
# The pause is 7.5 s: the daemon's segment store groups only after 5 s without storage
# requests (its default, seed 002's), checked once a second, so 7.5 s leaves it time to finish
# before the next pass. Only the I/O time counts (the reports' throughput): the pauses are the
# same in every mode. --quick: 3 passes (the scan 2).
SEGSTORE_PAUSE_MS = 7500.0
_VIEWER_ARRAY = dict(rows=512, cols=32768)

SEGSTORE_WORKLOADS = (
    Workload("viewer-zoom", "bench_viewer",
             options(pattern="zoom", **_VIEWER_ARRAY, window_rows=256, window_cols=8192,
                     levels=3), "--passes", 6, 3, SEGSTORE_PAUSE_MS,
             "noncontig-style zoom: each pass a window centred on the array, its rows halving "
             "and its row pieces doubling per level (256 x 64 KiB, 128 x 128 KiB, 64 x 256 KiB),"
             " twice round, each rank a band of its rows; a pause between passes.",
             count_sizes_input=False),
    Workload("viewer-tiles", "bench_viewer",
             options(pattern="tiles", **_VIEWER_ARRAY, window_rows=192, window_cols=16384,
                     shift=16, overlap=16), "--passes", 6, 3, SEGSTORE_PAUSE_MS,
             "mpi-tile-io with overlapping tiles: a 192-row x 128 KiB window in a 2 x 2 grid of "
             "tiles grown by 16 elements, moving down 16 rows a pass; a pause between passes.",
             count_sizes_input=False),
    Workload("viewer-scan", "bench_viewer",
             options(pattern="scan", **_VIEWER_ARRAY, window_cols=8192), "--passes", 4, 2, 0.0,
             "a read-once strided scan: 4 bands of 128 rows, 64 KiB of each row, each rank a "
             "quarter of each band; no byte read twice, no pause.",
             count_sizes_input=False),
)
# The emulated parallel file system of the segstore suite: the default device, plus a 4 ms seek
# per request that no other request's overlaps (stagio-emu --seek-ms): what scattered small
# requests cost a disk-backed file server, and what grouping saves.
SEGSTORE_DEVICE = launch.Device(latency_ms=5.0, bandwidth_mbps=200.0, parallel=8, seek_ms=4.0)

WORKLOADS += PREEXEC_WORKLOADS
WORKLOADS += PREEXEC_SLICED_WORKLOADS
WORKLOADS += IOND_WORKLOADS
WORKLOADS += OVERHEAD_WORKLOADS
WORKLOADS += SEGSTORE_WORKLOADS
WORKLOAD_NAMES = tuple(w.name for w in WORKLOADS)


def workload_by_name(name):
    return named_rows.find(WORKLOADS, name)


def program_path(build_dir, workload):
    return os.path.join(build_dir, workload.program_dir, workload.program)


def input_path(data_dir, workload, quick, ranks):
    """Where the workload's input lives. The name carries a hash of everything that shapes the
    file (program, parameters and ranks), so runs with other sizes never trust each other's
    files, runs that need the same file share it (pbench's 1 GiB matrix serves full and --quick
    runs, and a saturated row the normal row's), and a file made once is reused by later harness
    runs."""
    key = " ".join((workload.program,) + workload.input_parameters(quick) + ("ranks", str(ranks)))
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    return os.path.join(data_dir, f"{workload.program}-{digest}.in")


def output_path(data_dir, workload, mode_name):
    return os.path.join(data_dir, f"{workload.name}-{mode_name}.out")
