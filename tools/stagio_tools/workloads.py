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

from dataclasses import dataclass
import hashlib
import os

from . import named_rows

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
)

WORKLOAD_NAMES = tuple(w.name for w in WORKLOADS)


def workload_by_name(name):
    return named_rows.find(WORKLOADS, name)


def program_path(build_dir, workload):
    return os.path.join(build_dir, "bench", workload.program)


def input_path(data_dir, workload, quick, ranks):
    """Where the workload's input lives. The name carries a hash of everything that shapes the
    file (parameters and ranks), so runs with other sizes never trust each other's files, runs
    that need the same file share it (pbench's 1 GiB matrix serves full and --quick runs), and a
    file made once is reused by later harness runs."""
    key = " ".join(workload.input_parameters(quick) + ("ranks", str(ranks)))
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    return os.path.join(data_dir, f"{workload.name}-{digest}.in")


def output_path(data_dir, workload, mode_name):
    return os.path.join(data_dir, f"{workload.name}-{mode_name}.out")
